# Cython declarations of csrc/ld_system.h: the one place the binding spells out the interface.

cdef extern from "ld_system.h":
    ctypedef int (*ld_eval_q)(void *user, double t, const double *q, double *out) noexcept nogil
    ctypedef int (*ld_eval_qv)(void *user, double t, const double *q, const double *v,
                               double *out) noexcept nogil
    ctypedef int (*ld_eval_aux)(void *user, double t, const double *q, const double *v,
                                const double *lam, double *out) noexcept nogil
    ctypedef struct ld_system:
        int nq
        int nc
        const double *mass
        int phiq_nnz
        const int *phiq_colptr
        const int *phiq_rowind
        int fq_nnz
        const int *fq_colptr
        const int *fq_rowind
        int fv_nnz
        const int *fv_colptr
        const int *fv_rowind
        int hess_nnz
        const int *hess_colptr
        const int *hess_rowind
        void *user
        ld_eval_q phi
        ld_eval_q phi_q
        ld_eval_q phi_t
        ld_eval_qv gamma
        ld_eval_qv force
        ld_eval_qv force_q
        ld_eval_qv force_v
        ld_eval_qv phi_qq_lam
        int nz
        ld_eval_aux aux_rate
        int (*accept)(void *user, double t, const double *q, const double *v) noexcept nogil
        const int *row_active
        const int *phiq_const
        int nev
        const int *event_direction
        int (*events)(void *user, double t, const double *q, const double *v,
                      const double *lam, double *g) noexcept nogil
    int LD_OK
    int LD_ERR_NONFINITE
    int LD_ERR_DOMAIN
