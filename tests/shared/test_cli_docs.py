"""``coalloc docs [TOPIC]``: every guide prints, from an installed package as from a checkout.

Help texts and error messages point to ``coalloc docs`` or the site, never to a path of the
source tree (which an installed package does not have).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pydoc
import re
import shutil
from pathlib import Path

import pytest

import coalloc
from coalloc.cli import docs as docs_cli
from coalloc.cli import main

REPO = Path(__file__).resolve().parents[2]
GUIDES = sorted(p.stem for p in (REPO / "docs").glob("*.md") if p.stem not in ("index", "results"))
PACKAGE = Path(coalloc.__file__).resolve().parent


def test_the_repository_has_the_guides_the_issue_names():
    expected = {"formats", "architecture", "algorithms", "performance", *coalloc.FAMILIES}
    assert expected <= set(GUIDES)


@pytest.mark.parametrize("topic", GUIDES)
def test_every_topic_prints_its_guide(topic, capsys):
    assert main(["docs", topic]) == 0
    out = capsys.readouterr().out
    assert out == (REPO / "docs" / f"{topic}.md").read_text(encoding="utf-8")
    assert main(["docs", f"{topic}.md"]) == 0  # the file name works too
    assert capsys.readouterr().out == out


def test_listing_names_every_topic_and_the_site(capsys):
    assert main(["docs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert docs_cli.URL in lines[0]
    listed = [line.split()[0] for line in lines[2:]]
    assert listed == GUIDES


def test_unknown_topic_is_one_line_naming_the_topics(capsys):
    assert main(["docs", "no-such-guide"]) == 2
    err = capsys.readouterr().err
    assert "no-such-guide" in err and "formats" in err and docs_cli.URL in err
    assert len(err.strip().splitlines()) == 1


def _load_copy(package_dir: Path):
    """Import a copy of coalloc/cli/docs.py placed inside ``package_dir`` (a fake install)."""
    (package_dir / "cli").mkdir(parents=True)
    shutil.copy(docs_cli.__file__, package_dir / "cli" / "docs.py")
    spec = importlib.util.spec_from_file_location("_docs_copy", package_dir / "cli" / "docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_installed_layout_reads_the_copies_in_coalloc_docs(tmp_path):
    # site-packages/coalloc/_docs/*.md, with no docs/ folder anywhere above it.
    package = tmp_path / "site-packages" / "coalloc"
    (package / "_docs").mkdir(parents=True)
    for name in ("formats", "taskmap"):
        (package / "_docs" / f"{name}.md").write_text(f"# {name} (installed copy)\n")
    module = _load_copy(package)
    assert module.docs_dir() == package / "_docs"
    assert sorted(module.topics()) == ["formats", "taskmap"]
    assert module.read_topic("taskmap") == "# taskmap (installed copy)\n"
    with pytest.raises(ValueError, match="ctaap"):
        module.read_topic("ctaap")


def test_without_any_guides_the_listing_still_gives_the_site(tmp_path, capsys):
    module = _load_copy(tmp_path / "lonely" / "coalloc")
    assert module.docs_dir() is None and module.topics() == {}
    assert module._cmd_docs(type("Args", (), {"topic": None})()) == 0
    assert module.URL in capsys.readouterr().out


def test_the_imported_package_finds_every_guide():
    # Run against an installed coalloc (CI), this checks the build copied docs/*.md into
    # coalloc/_docs/; from a checkout (PYTHONPATH=src) it reads docs/ itself.
    where = docs_cli.docs_dir()
    installed = not (PACKAGE.parent.parent / "docs" / "formats.md").is_file()
    assert where == (PACKAGE / "_docs" if installed else REPO / "docs")
    assert sorted(docs_cli.topics()) == GUIDES


def _strings_outside_docstrings(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                yield node.lineno, node.value


def test_no_help_text_or_message_points_into_the_source_tree():
    bad = []
    for path in sorted((REPO / "src" / "coalloc").rglob("*.py")):
        if path.name == "docs.py" and path.parent.name == "cli":
            continue  # the module that reads the guides
        for line, text in _strings_outside_docstrings(path):
            if "docs/" in text or (".md" in text and "coalloc docs" not in text):
                bad.append(f"{path.relative_to(REPO)}:{line}: {text[:60]!r}")
    assert not bad, "point to 'coalloc docs TOPIC' instead:\n" + "\n".join(bad)


def _api_generator():
    spec = importlib.util.spec_from_file_location("_coalloc_docs_api", REPO / "docs" / "_api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("family", coalloc.FAMILIES)
def test_the_api_reference_lists_every_public_name_of_each_family(family):
    # docs/_api.py writes docs/api/<family>.rst (at every docs build) from the family's
    # __all__: a summary table (autosummary, a page per name) or a directive for every name,
    # a submodule by automodule with a table of its own names.
    api = _api_generator()
    page = api.api_pages()[f"{family}.rst"]
    entries = api.page_entries(page)
    module = importlib.import_module(f"coalloc.{family}")
    missing = []
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.ismodule(obj):
            if not re.search(rf"^\.\. automodule:: {re.escape(obj.__name__)}$", page, re.M):
                missing.append(name)
            missing += [f"{name}.{n}" for n in api._submodule_names(obj)
                        if f"{obj.__name__}.{n}" not in entries]  # fmt: skip
        elif f"coalloc.{family}.{name}" not in entries:
            missing.append(name)
    assert not missing, f"the API page of {family} misses {missing}"
    own = [n for n in entries if n.count(".") == 2 and n.startswith(f"coalloc.{family}.")]
    assert len(own) == sum(not inspect.ismodule(getattr(module, n)) for n in module.__all__)


def test_the_api_reference_has_the_top_level_batch_and_bases():
    api = _api_generator()
    entries = api.page_entries((REPO / "docs" / "api" / "coalloc.rst").read_text(encoding="utf-8"))
    for name in ("solve_many", "solve_many_iter", "BatchError", "Result", "Report",
                 "STATUSES", "InstanceError", "FAMILIES"):  # fmt: skip
        assert f"coalloc.{name}" in entries, name
    index = (REPO / "docs" / "api" / "index.rst").read_text(encoding="utf-8")
    assert all(f"   {f}\n" in index for f in ("coalloc",) + coalloc.FAMILIES)


def test_every_method_and_property_of_a_documented_class_is_validated_and_documented():
    # ci/docs.sh holds these members to numpydoc's checks (conf.py: methods like functions,
    # properties to ATTRIBUTE_CHECKS); this is the part that needs no numpydoc: the list
    # conf.py validates covers every class shown with its members, and each member has a
    # docstring of its own, with Examples for a method.
    api = _api_generator()
    pages = "\n".join(api.api_pages().values())
    pages += (REPO / "docs" / "api" / "coalloc.rst").read_text(encoding="utf-8")
    # a class of a summary table gets a page with its members (_templates/autosummary/class.rst)
    shown = {name for name, how in api.page_entries(pages).items()
             if how == "autosummary" and inspect.isclass(pydoc.locate(name))}  # fmt: skip
    classes = api.documented_classes()
    assert shown and shown <= set(classes), shown - set(classes)
    members = api.documented_members()
    assert members["coalloc.taskmap.OccupancyState.place"] == "method"
    assert members["coalloc.testbed.Instance.check_params"] == "method"  # a classmethod
    assert members["coalloc.FamilyInstance.from_dict"] == "method"  # the protocol's base
    assert members["coalloc.ctaap.Request.n_edges"] == "attribute"
    assert members["coalloc.collective.simulate.SimulationResult.summary"] == "method"
    assert "coalloc.ctaap.Instance.request" not in members  # a NamedTuple field
    no_doc, no_example = [], []
    for name, kind in members.items():
        owner, attr = name.rsplit(".", 1)
        doc = getattr(getattr(classes[owner], attr), "__doc__", None) or ""
        if not doc.strip():
            no_doc.append(name)
        elif kind == "method" and not re.search(r"^\s*Examples\n\s*-{8}", doc, re.M):
            no_example.append(name)
    assert not no_doc, f"no docstring of their own: {no_doc}"
    assert not no_example, f"methods without an Examples section: {no_example}"
