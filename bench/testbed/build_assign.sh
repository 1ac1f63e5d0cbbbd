#!/usr/bin/env bash
# Build Emulab's real `assign` (text formats only) from its public source, outside the project.
#
# Usage: bench/testbed/build_assign.sh SRC_DIR OUTPUT_BINARY [gnu++11|gnu++98]
#
#   SRC_DIR        the `assign/` folder of nmc-probe/emulab-portal (2016) or
#                  senseisimple/emulab-stable (2011)
#   OUTPUT_BINARY  where the linked `assign` goes (e.g. /work/peers/assign/assign-2016)
#   STD            C++ dialect: gnu++11 (default; the 2016 code) or gnu++98 (the 2011 code)
#
# Needs g++ and Boost.Graph headers (Debian: apt-get update && apt-get install -y libboost-graph-dev).
# The defines are the upstream GNUmakefile.in's (the ones Emulab ships assign with), minus WITH_XML
# (no xerces: .top/.ptop text only). About 2 minutes on one core. Nothing is written into SRC_DIR:
# the objects go to a temporary folder next to OUTPUT_BINARY.
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 SRC_DIR OUTPUT_BINARY [gnu++11|gnu++98]" >&2
    exit 2
fi
src=$(cd "$1" && pwd)
out=$2
std=${3:-gnu++11}
for f in parse_top parse_ptop assign pclass vclass score parser solution anneal featuredesire \
    neighborhood fstring config; do
    [ -f "$src/$f.cc" ] || { echo "$0: $src/$f.cc missing: is $src an Emulab assign/ folder?" >&2; exit 2; }
done
[ -f /usr/include/boost/graph/adjacency_list.hpp ] \
    || { echo "$0: Boost.Graph headers missing (apt-get install -y libboost-graph-dev)" >&2; exit 2; }
CXX=${CXX:-g++}
FLAGS=(-std="$std" -fpermissive -w -O3 -pipe
    -DMELT -DEPSILON_TERMINATE -DCHILL -DNEIGHBOR_LENGTH -DLOCAL_DERIVATIVE
    -DALLOW_NEGATIVE_DELTA -DINTERSWITCH_LENGTH -DFIND_PNODE_SEARCH -DNO_REVERT -DPER_VNODE_TT
    -DFIX_PLINK_ENDPOINTS -DTRIVIAL_LINK_BW -DSPECIAL_VIOLATION_TREATMENT -DNEWER_BOOST
    "-DTBROOT=\"/usr/testbed\"")
objdir=$(mktemp -d "$(dirname "$out")/.assign-build.XXXXXX")
trap 'rm -rf "$objdir"' EXIT
objs=()
for f in parse_top parse_ptop assign pclass vclass score parser solution anneal featuredesire \
    neighborhood fstring config; do
    echo "  CXX $f.cc" >&2
    "$CXX" "${FLAGS[@]}" -I"$src" -c "$src/$f.cc" -o "$objdir/$f.o"
    objs+=("$objdir/$f.o")
done
"$CXX" -o "$out" "${objs[@]}" -lm
echo "built $out" >&2
