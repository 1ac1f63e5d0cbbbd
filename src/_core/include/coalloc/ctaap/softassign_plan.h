/* The plan of the step-1 kernel coalloc.ctaap._softassign.graduated_assignment: every
   scalar of the graduated-assignment loop in one struct, filled once (with the GIL) from
   the Python-side plan dict (Cython converts the dict field by field; a missing field is
   a TypeError/ValueError naming it). The NumPy twin
   coalloc.ctaap._reference.softassign.graduated_assignment_reference reads the same dict.
   All fields are IN. */
#ifndef COALLOC_CTAAP_SOFTASSIGN_PLAN_H
#define COALLOC_CTAAP_SOFTASSIGN_PLAN_H

typedef struct coalloc_ga_plan {
    int symmetric;     /* nonzero: b and bhat symmetric, the in-edge pass is skipped */
    double f_ok;       /* score of an edge a cluster pair can carry */
    double f_bad;      /* score of one it cannot */
    double q_scale;    /* Q is divided by this (nonzero) number before exponentiation */
    double beta0;      /* initial inverse temperature (> 0) */
    double beta_f;     /* final inverse temperature */
    double beta_r;     /* growth rate of beta (> 1) */
    int max_outer;     /* softassign iterations per temperature */
    int max_inner;     /* Sinkhorn iterations per softassign iteration */
    double tol_outer;  /* stop a temperature when max |X - X_prev| < tol_outer */
    double tol_inner;  /* Sinkhorn's max-norm tolerance */
} coalloc_ga_plan;

#endif
