/*
 * Plain-C tests of the force elements (ld_forces.c, ld_forces3.c): two planar bodies with one
 * record of each coordinate kind and a body-frame load, two spatial bodies with records
 * of the three spatial coordinates and body-frame force and torque loads, and two rods
 * (six coordinates each, read through body_view) with distance records and a global force,
 * a journal in its bearing (a distance contact of sense -1) and a joint's friction,
 * written directly against ld_forces.h.
 * Build: cc -std=c99 test_forces.c ../ld_forces.c ../ld_forces3.c ../ld_cams.c -I.. -lm
 * Prints one line per check and "N passed, M failed"; exits non-zero on any failure.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ld_forces.h"
#include "ld_system.h"

#define NQ 8
#define PI 3.14159265358979323846

static int passed = 0, failed = 0;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    if (ok) passed++; else failed++;
}

/* Central differences of Q in q and in v, row-major n x n into fd_q, fd_v (Qp, Qm: [n]). */
static void fd_jacobians(const ld_forces *F, const ld_forces_run *run, double t, double *q,
                         double *v, int n, double *fd_q, double *fd_v, double *Qp, double *Qm)
{
    const double h = 1e-6;
    int i, j;
    for (j = 0; j < n; j++) {
        double save = q[j];
        memset(Qp, 0, n * sizeof *Qp); memset(Qm, 0, n * sizeof *Qm);
        q[j] = save + h; ld_forces_add(F, run, t, q, v, Qp);
        q[j] = save - h; ld_forces_add(F, run, t, q, v, Qm);
        q[j] = save;
        for (i = 0; i < n; i++) fd_q[n * i + j] = (Qp[i] - Qm[i]) / (2 * h);
        save = v[j];
        memset(Qp, 0, n * sizeof *Qp); memset(Qm, 0, n * sizeof *Qm);
        v[j] = save + h; ld_forces_add(F, run, t, q, v, Qp);
        v[j] = save - h; ld_forces_add(F, run, t, q, v, Qm);
        v[j] = save;
        for (i = 0; i < n; i++) fd_v[n * i + j] = (Qp[i] - Qm[i]) / (2 * h);
    }
}

/* Q_q and Q_v of ld_forces_jacobians (dense n x n slots, n <= 24) against central
 * differences at (q, v, t), checked as "<label>...", within 1e-6 of Q_q's largest entry;
 * returns that entry. */
static double check_jacobians(const ld_forces *F, const ld_forces_run *run, double t,
                              double *q, double *v, int n, const char *label)
{
    static double fq[24 * 24], fv[24 * 24], fd_q[24 * 24], fd_v[24 * 24];
    double Qp[24], Qm[24], err_q = 0, err_v = 0, big = 0;
    char what[96];
    int i;
    memset(fq, 0, sizeof fq);
    memset(fv, 0, sizeof fv);
    snprintf(what, sizeof what, "%sjacobians evaluate", label);
    check(ld_forces_jacobians(F, run, t, q, v, fq, fv) == LD_OK, what);
    fd_jacobians(F, run, t, q, v, n, fd_q, fd_v, Qp, Qm);
    for (i = 0; i < n * n; i++) {
        err_q = fmax(err_q, fabs(fq[i] - fd_q[i]));
        err_v = fmax(err_v, fabs(fv[i] - fd_v[i]));
        big = fmax(big, fabs(fq[i]));
    }
    snprintf(what, sizeof what, "%sQ_q matches central differences", label);
    check(big > 1.0 && err_q < 1e-6 * big, what);
    snprintf(what, sizeof what, "%sQ_v matches central differences", label);
    check(err_v < 1e-6 * big, what);
    return big;
}

/* The power balance of the elements alone along the motion (q, v) at t: dV/dt (a central
 * difference over dt = 1e-6) + Q . v - P, with P the sum of the first `nrates` rates z of
 * ld_forces_rates (the records' and loads' power); *P_out gets P. Q, q1, z: scratch of n,
 * n and the rates' length. */
static double power_gap(const ld_forces *F, const ld_forces_run *run, double t,
                        const double *q, const double *v, int n, int nrates, double *Q,
                        double *q1, double *z, double *P_out)
{
    const double dt = 1e-6;
    double qv = 0.0, P = 0.0, V0, V1;
    int i;
    memset(Q, 0, n * sizeof *Q);
    ld_forces_add(F, run, t, q, v, Q);
    for (i = 0; i < n; i++) qv += Q[i] * v[i];
    for (i = 0; i < n; i++) q1[i] = q[i] - 0.5 * dt * v[i];
    V0 = ld_forces_potential(F, run, t - 0.5 * dt, q1);
    for (i = 0; i < n; i++) q1[i] = q[i] + 0.5 * dt * v[i];
    V1 = ld_forces_potential(F, run, t + 0.5 * dt, q1);
    ld_forces_rates(F, run, t, q, v, z);
    for (i = 0; i < nrates; i++) P += z[i];
    *P_out = P;
    return (V1 - V0) / dt + qv - P;
}

/* Dense Q_q, Q_v: every record's local block maps to the full 8 x 8 matrix (row-major
 * slot = 8 row + col), so the pattern is the dense one. */
static int slot_q[5 * 64], slot_v[5 * 64], load_slot[16];

static void dense_slots(const int *body, int nrec)
{
    int r, i, j;
    for (r = 0; r < nrec; r++)
        for (i = 0; i < 8; i++)
            for (j = 0; j < 8; j++) {
                int bi = body[2 * r + i / 4], bj = body[2 * r + j / 4];
                int p = 64 * r + 8 * i + j;
                slot_q[p] = slot_v[p] =
                    (bi < 0 || bj < 0) ? -1 : 8 * (4 * bi + i % 4) + 4 * bj + j % 4;
            }
    for (i = 0; i < 4; i++)
        for (j = 0; j < 4; j++) load_slot[4 * i + j] = 8 * (4 + i) + 4 + j;   /* body 1 */
}


/* Two spatial bodies (12 coordinates each: r, e1, e2, e3) in a turned configuration: records
 * DISTANCE (ground point - body 0 point), SLIDE (body 0's direction, body 0 - body 1 points)
 * and ANGLE (body 0's directions a, b; body 1's d), with stiffness, damping, a load law and a
 * controller input; a body-frame force on body 1 and a body-frame torque on body 0. Q_q and
 * Q_v against central differences, and the power balance. */
#define NQ3 24
static int slot3_q[3 * 576], slot3_v[3 * 576], load3_slot[2 * 144];

static void spatial_section(void)
{
    static const int kind[2] = {LD_LAW_HARMONIC, LD_LAW_POLYNOMIAL};
    static const int start[3] = {0, 4, 6};
    static const double par[6] = {0.5, 0.1, 3.0, 0.2, 0.3, -0.4};
    static const int coord[3] = {LD_COORD_DISTANCE, LD_COORD_SLIDE, LD_COORD_ANGLE};
    static const int body[6] = {-1, 0, 0, 1, 0, 1};
    static const double geom3[45] = {
        0.3, -0.2, 0.5, 0.1, 0.05, -0.1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0.2, 0.0, 0.1, -0.1, 0.3, 0.0, 0.6, 0.0, 0.8, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.6, 0.8, 0.0};
    static const double k[3] = {40.0, 25.0, 3.0}, c[3] = {0.7, 1.1, 0.2};
    static const int ref_law[3] = {0, -1, -1}, load_law[3] = {-1, -1, 1};
    static const double ref_value[3] = {0.0, 0.1, 0.3};
    static const int input_mode[3] = {LD_INPUT_NONE, LD_INPUT_TARGET, LD_INPUT_ADD};
    static const int input[3] = {-1, 0, 1};
    static const int lbody[2] = {1, 0}, lframe[2] = {1, 1}, lkind[2] = {LD_LOAD_FORCE,
                                                                        LD_LOAD_TORQUE};
    static const int llaws[6] = {1, -1, 0, 0, 1, -1};
    static const double lpoint[6] = {0.2, 0.1, -0.3, 0.0, 0.0, 0.0};
    static const double laxes[18] = {0, 1, 0, 0, 0, 1, 1, 0, 0,    1, 0, 0, 0, 1, 0, 0, 0, 1};
    double angle_ref[3] = {0, 0, 0}, in[2] = {0.15, 0.05};
    int active[2] = {1, 0}, fail = -1, r, i, j, b;
    ld_laws laws;
    ld_forces F;
    ld_forces_run run;
    double q[NQ3], v[NQ3], Q[NQ3], t = 0.7;
    /* two turned frames (rotations about (1,2,2)/3 by 0.7 and about (0,1,0) by -0.4) */
    static const double R0[9] = {0.7918, -0.2745, 0.5457, 0.4919, 0.8159, -0.3038,
                                 -0.3618, 0.5087, 0.7811};
    static const double R1[9] = {0.92106, 0.0, -0.38942, 0.0, 1.0, 0.0, 0.38942, 0.0,
                                 0.92106};
    for (b = 0; b < 2; b++) {
        const double *R = b ? R1 : R0;
        q[12 * b] = 0.1 + b; q[12 * b + 1] = -0.2; q[12 * b + 2] = 0.3 * b;
        for (i = 0; i < 3; i++)          /* e_k = column k */
            for (j = 0; j < 3; j++) q[12 * b + 3 + 3 * i + j] = R[3 * j + i];
    }
    for (i = 0; i < NQ3; i++) v[i] = 0.3 * sin(1.0 + 1.7 * i);
    for (r = 0; r < 3; r++)
        for (i = 0; i < 24; i++)
            for (j = 0; j < 24; j++) {
                int bi = body[2 * r + i / 12], bj = body[2 * r + j / 12];
                slot3_q[576 * r + 24 * i + j] = slot3_v[576 * r + 24 * i + j] =
                    (bi < 0 || bj < 0) ? -1 : NQ3 * (12 * bi + i % 12) + 12 * bj + j % 12;
            }
    for (r = 0; r < 2; r++)
        for (i = 0; i < 12; i++)
            for (j = 0; j < 12; j++)
                load3_slot[144 * r + 12 * i + j] =
                    NQ3 * (12 * lbody[r] + i) + 12 * lbody[r] + j;
    laws.nlaw = 2; laws.kind = kind; laws.start = start; laws.par = par; laws.values = NULL;
    memset(&F, 0, sizeof F);
    F.stride = LD_STRIDE_SPATIAL;
    F.nrec = 3; F.coord = coord; F.body = body; F.geom3 = geom3; F.stiffness = k;
    F.damping = c; F.ref_law = ref_law; F.ref_value = ref_value; F.load_law = load_law;
    F.input_mode = input_mode; F.input = input; F.slot_q = slot3_q; F.slot_v = slot3_v;
    F.nload = 2; F.load_body = lbody; F.load_point = lpoint; F.load_frame = lframe;
    F.load_laws = llaws; F.load_slot_q = load3_slot; F.load_kind = lkind; F.load_axes = laxes;
    F.laws = &laws;
    memset(&run, 0, sizeof run);
    run.input = in; run.input_active = active; run.angle_ref = angle_ref;
    run.fail_record = &fail;
    ld_forces_accept(&F, &run, q);

    check_jacobians(&F, &run, t, q, v, NQ3, "spatial: ");
    {   /* dV/dt + Q . v = P of the records and loads (3 records, 2 loads) */
        double z[3 + 2 + 3], q1[NQ3], P;
        double gap = power_gap(&F, &run, t, q, v, NQ3, 5, Q, q1, z, &P);
        check(fabs(gap) < 1e-6 * (1 + fabs(P)), "spatial: dV/dt + Q.v = P");
    }
    {   /* body 1's axes collapsed: its direction d has no angle, LD_ERR_DOMAIN, named */
        double qq[NQ3];
        memcpy(qq, q, sizeof qq);
        for (i = 0; i < 3; i++)
            qq[12 + 3 + i] = qq[12 + 6 + i] = qq[12 + 9 + i] = 0.0;
        memset(Q, 0, sizeof Q);
        fail = -1;
        check(ld_forces_add(&F, &run, t, qq, v, Q) == LD_ERR_DOMAIN && fail == 2,
              "spatial: an undefined angle is LD_ERR_DOMAIN, record 2");
    }
}

/* Two rods (6 coordinates each: r and the axis e1, read through body_view with -1 for the
 * absent e2, e3): records DISTANCE (ground point - rod 0's point on its axis) and DISTANCE
 * (rod 0's end - rod 1's point), with stiffness, damping and a moving free length, and a
 * global force at rod 1's point. Q_q and Q_v against central differences, the power balance,
 * and the same elements on two framed bodies (12 coordinates each, the same r and e1, any
 * e2, e3): the rods' Q is the framed bodies' on r and e1. */
#define NQR 12
static int slotr_q[2 * 576], slotr_v[2 * 576], loadr_slot[144];

static void rod_section(void)
{
    static const int kind[1] = {LD_LAW_HARMONIC};
    static const int start[2] = {0, 4};
    static const double par[4] = {0.5, 0.1, 3.0, 0.2};
    static const int coord[2] = {LD_COORD_DISTANCE, LD_COORD_DISTANCE};
    static const int body[4] = {-1, 0, 0, 1};
    static const double geom3[30] = {
        0.3, -0.2, 0.5, -0.25, 0.0, 0.0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0.25, 0.0, 0.0, -0.2, 0.0, 0.0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    static const double k[2] = {40.0, 25.0}, c[2] = {0.7, 1.1};
    static const int ref_law[2] = {0, -1}, load_law[2] = {-1, -1};
    static const double ref_value[2] = {0.0, 0.45};
    static const int input_mode[2] = {LD_INPUT_NONE, LD_INPUT_NONE}, input[2] = {-1, -1};
    static const int lbody[1] = {1}, lframe[1] = {0}, lkind[1] = {LD_LOAD_FORCE};
    static const int llaws[3] = {0, -1, 0};
    static const double lpoint[3] = {0.2, 0.0, 0.0};
    static const double laxes[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    /* the rods' views: r, then e1 (the axis), e2 and e3 absent */
    static const int view[24] = {0, 1, 2, 3, 4, 5, -1, -1, -1, -1, -1, -1,
                                 6, 7, 8, 9, 10, 11, -1, -1, -1, -1, -1, -1};
    static const double axis0[3] = {0.48, 0.6, 0.64}, axis1[3] = {0.0, 0.6, -0.8};
    double angle_ref[2] = {0, 0}, q[NQR], v[NQR], Q[NQR], t = 0.7;
    double q24[24], v24[24], Q24[24], big, gap12 = 0;
    int fail = -1, r, i, j, b;
    ld_laws laws;
    ld_forces F;
    ld_forces_run run;
    for (b = 0; b < 2; b++) {
        const double *u = b ? axis1 : axis0;
        q[6 * b] = 0.1 + 0.5 * b; q[6 * b + 1] = -0.2; q[6 * b + 2] = 0.3 * b;
        for (i = 0; i < 3; i++) q[6 * b + 3 + i] = u[i];
    }
    for (i = 0; i < NQR; i++) v[i] = 0.3 * sin(1.0 + 1.7 * i);
    for (r = 0; r < 2; r++)
        for (i = 0; i < 24; i++)
            for (j = 0; j < 24; j++) {
                int bi = body[2 * r + i / 12], bj = body[2 * r + j / 12];
                int gi = bi < 0 ? -1 : view[12 * bi + i % 12];
                int gj = bj < 0 ? -1 : view[12 * bj + j % 12];
                slotr_q[576 * r + 24 * i + j] = slotr_v[576 * r + 24 * i + j] =
                    (gi < 0 || gj < 0) ? -1 : NQR * gi + gj;
            }
    for (i = 0; i < 144; i++) loadr_slot[i] = -1;   /* a global force: constant in q */
    laws.nlaw = 1; laws.kind = kind; laws.start = start; laws.par = par; laws.values = NULL;
    F = (ld_forces){
        .stride = LD_STRIDE_SPATIAL, .nrec = 2, .coord = coord, .body = body,
        .geom3 = geom3, .body_view = view, .stiffness = k, .damping = c,
        .ref_law = ref_law, .ref_value = ref_value, .load_law = load_law,
        .input_mode = input_mode, .input = input, .slot_q = slotr_q, .slot_v = slotr_v,
        .nload = 1, .load_body = lbody, .load_point = lpoint, .load_frame = lframe,
        .load_laws = llaws, .load_slot_q = loadr_slot, .load_kind = lkind,
        .load_axes = laxes, .laws = &laws};
    memset(&run, 0, sizeof run);
    run.angle_ref = angle_ref;
    run.fail_record = &fail;
    big = check_jacobians(&F, &run, t, q, v, NQR, "rods: ");
    {
        double z[2 + 1 + 2], q1[NQR], P;
        double gap = power_gap(&F, &run, t, q, v, NQR, 3, Q, q1, z, &P);
        check(fabs(gap) < 1e-6 * (1 + fabs(P)), "rods: dV/dt + Q.v = P");
    }
    /* the same elements on framed bodies: r and e1 the rods', e2 and e3 arbitrary */
    memset(Q, 0, sizeof Q);
    ld_forces_add(&F, &run, t, q, v, Q);
    for (b = 0; b < 2; b++)
        for (i = 0; i < 12; i++) {
            q24[12 * b + i] = i < 6 ? q[6 * b + i] : 0.4 * cos(2.0 + i + b);
            v24[12 * b + i] = i < 6 ? v[6 * b + i] : 0.2 * sin(1.0 + i - b);
        }
    F.body_view = NULL;
    F.slot_q = NULL; F.slot_v = NULL; F.load_slot_q = NULL;
    memset(Q24, 0, sizeof Q24);
    check(ld_forces_add(&F, &run, t, q24, v24, Q24) == LD_OK, "rods as framed bodies: Q");
    for (b = 0; b < 2; b++)
        for (i = 0; i < 12; i++)
            gap12 = fmax(gap12, fabs(i < 6 ? Q24[12 * b + i] - Q[6 * b + i]
                                           : Q24[12 * b + i]));
    check(gap12 < 1e-12 * big, "rods: Q is the framed bodies' on r and e1, none on e2, e3");
}

/* One planar record between bodies 0 and 1 with no gains, reference, load or input, its
 * block dense (slot = 8 row + col), and a run without inputs: the contact and friction
 * records of the sections below set their coordinate, geometry and law. */
static const double one_zero[1] = {0.0};
static const int one_none[1] = {-1}, one_mode[1] = {LD_INPUT_NONE}, one_body[2] = {0, 1};
static int one_slot[64], one_active[1] = {0}, one_fail = -1;
static double one_angle_ref[1], one_input[1];

static void one_record(ld_forces *F, ld_forces_run *run, const int *coord,
                       const double *geom, const int *law, const double *law_par)
{
    int i;
    memset(F, 0, sizeof *F);
    memset(run, 0, sizeof *run);
    for (i = 0; i < 64; i++) one_slot[i] = i;
    F->nrec = 1; F->coord = coord; F->body = one_body; F->geom = geom;
    F->stiffness = one_zero; F->damping = one_zero; F->ref_law = one_none;
    F->ref_value = one_zero; F->load_law = one_none; F->input_mode = one_mode;
    F->input = one_none; F->slot_q = one_slot; F->slot_v = one_slot;
    F->law = law; F->law_par = law_par;
    one_angle_ref[0] = 0.0;
    run->input = one_input; run->input_active = one_active; run->angle_ref = one_angle_ref;
    run->fail_record = &one_fail;
}

/* A journal in its bearing: a Hunt-Crossley distance record of sense -1 (penetration
 * delta = s - gap, s the distance of the bearing's point on body 0 from the journal's on
 * body 1). Pressed in, Q_q and Q_v against central differences, the force pulling the
 * journal back towards the bearing's centre; centred (the points coincide), no force and no
 * domain error; within the clearance, none either. */
static void clearance_section(void)
{
    static const int coord[1] = {LD_COORD_DISTANCE}, law[1] = {LD_FORCE_HERTZ};
    static const double geom[6] = {0.1, 0.05, -0.2, 0.0, 1.0, 0.0};
    static const double law_par[4] = {3e4, 1.5, 0.4, 0.01}, sense[1] = {-1.0};
    double q[NQ] = {0.4, 0.1, 0.8, 0.6, 0.0, 0.0, 0.6, -0.8};
    double v[NQ] = {0.3, -0.2, 0.5, -0.4, 0.1, 0.7, -0.2, 0.3}, Q[NQ], s[3], p0[2], p1[2];
    int i, j;
    ld_forces F;
    ld_forces_run run;
    one_record(&F, &run, coord, geom, law, law_par);
    F.law_sense = sense;
    /* the bearing's point p0 = (0.4 + 0.8 0.1 - 0.6 0.05, 0.1 + 0.6 0.1 + 0.8 0.05) */
    p0[0] = q[0] + q[2] * 0.1 - q[3] * 0.05;
    p0[1] = q[1] + q[3] * 0.1 + q[2] * 0.05;
    /* journal 0.013 from it (0.003 in): body 1's point (-0.2, 0) is at r1 - 0.2 u1 */
    q[4] = p0[0] + 0.2 * q[6] + 0.013 * cos(0.7);
    q[5] = p0[1] + 0.2 * q[7] + 0.013 * sin(0.7);
    check_jacobians(&F, &run, 0.0, q, v, NQ, "clearance: ");
    memset(Q, 0, sizeof Q);
    ld_forces_add(&F, &run, 0.0, q, v, Q);
    ld_forces_values(&F, &run, 0.0, q, v, s);
    check(fabs(s[0] - 0.013) < 1e-12 && s[2] < 0.0,
          "clearance: the eccentricity is s, and the force along it negative");
    check(Q[4] * cos(0.7) + Q[5] * sin(0.7) < 0.0 && fabs(Q[4] + Q[0]) < 1e-12 &&
          fabs(Q[5] + Q[1]) < 1e-12,
          "clearance: the journal pushed back to the bearing's centre, the bearing away");
    p1[0] = p0[0] + 0.2 * q[6];
    p1[1] = p0[1] + 0.2 * q[7];
    q[4] = p1[0]; q[5] = p1[1];      /* centred: the two points coincide */
    memset(Q, 0, sizeof Q);
    one_fail = -1;
    check(ld_forces_add(&F, &run, 0.0, q, v, Q) == LD_OK && one_fail == -1,
          "clearance: a centred journal is no domain error");
    for (i = 0, j = 0; i < NQ; i++) j += Q[i] != 0.0;
    check(j == 0, "clearance: and feels no force");
    q[4] += 0.006;                   /* within the clearance */
    memset(Q, 0, sizeof Q);
    ld_forces_add(&F, &run, 0.0, q, v, Q);
    for (i = 0, j = 0; i < NQ; i++) j += Q[i] != 0.0;
    check(j == 0, "clearance: nor anywhere within the clearance");
}

/* A joint's Coulomb friction with Stribeck's term: a friction record on a relative angle
 * with no normal record (law_par = F_c, -1, v_s, F_s - F_c), sliding (sigma = +1). Its
 * force against the law, Q_q and Q_v against central differences (Q_v carries the
 * Stribeck slope), and sigma = 0 (sticking: held by its row) gives no force. */
static void joint_friction_section(void)
{
    static const int coord[1] = {LD_COORD_ANGLE}, law[1] = {LD_FORCE_FRICTION};
    static const double geom[6] = {0.0, 0.0, 0.0, 0.0, 1.0, 0.0};
    static const double law_par[4] = {0.7, -1.0, 0.3, 0.4};
    double slip[1] = {1.0}, s[3], bump;
    double q[NQ] = {0.4, 0.1, 0.8, 0.6, 0.9, 0.5, 0.6, -0.8};
    double v[NQ] = {0.3, -0.2, 0.05, -0.04, 0.1, 0.7, -0.2, 0.3}, Q[NQ];
    int i, j;
    ld_forces F;
    ld_forces_run run;
    one_record(&F, &run, coord, geom, law, law_par);
    run.slip = slip;
    ld_forces_accept(&F, &run, q);
    ld_forces_values(&F, &run, 0.0, q, v, s);
    bump = 0.4 * exp(-(s[1] / 0.3) * (s[1] / 0.3));
    check(fabs(s[1]) > 0.05 && fabs(s[2] + 0.7 + bump) < 1e-14,
          "joint friction: f = -(F_c + (F_s - F_c) exp(-(s'/v_s)^2)) while sliding forward");
    check_jacobians(&F, &run, 0.0, q, v, NQ, "joint friction: ");
    slip[0] = 0.0;
    memset(Q, 0, sizeof Q);
    ld_forces_add(&F, &run, 0.0, q, v, Q);
    for (i = 0, j = 0; i < NQ; i++) j += Q[i] != 0.0;
    check(j == 0, "joint friction: none while it sticks (its row holds it)");
}

int main(void)
{
    /* Records: 0 spring ground point (0.3, -0.2) - body 0 point (0.1, 0.05), free length
     * from law 0 (harmonic); 1 torsional spring-damper body 0 -> body 1 with a motor load
     * (law 1, polynomial); 2 servo on the slide of body 1's cm along body 0's axis rotated
     * by 0.4 rad, target from a controller input; 3 a Hunt-Crossley contact of a circle of
     * radius 0.75 at body 1's point (0.1, 0) with the ground line through (0, 0.3) at 0.2 rad
     * (pressed in at the test state); 4 its Coulomb friction (mu 0.6, sliding direction +1)
     * on the rolling coordinate of that circle along the line. Load: body-frame force at body 1's point (0.2, 0.1) with
     * components from laws 1 and 0. */
    static const int kind[2] = {LD_LAW_HARMONIC, LD_LAW_POLYNOMIAL};
    static const int start[3] = {0, 4, 6};
    static const double par[6] = {0.5, 0.1, 3.0, 0.2, 0.3, -0.4};
    static const int coord[5] = {LD_COORD_DISTANCE, LD_COORD_ANGLE, LD_COORD_SLIDE,
                                 LD_COORD_SLIDE, LD_COORD_ROLL};
    static const int body[10] = {-1, 0, 0, 1, 0, 1, -1, 1, -1, 1};
    static const double geom[30] = {0.3, -0.2, 0.1, 0.05, 1, 0,
                                     0, 0, 0, 0, 1, 0,
                                     0.0, 0.0, 0.0, 0.0, 0, 0,
                                     0.0, 0.3, 0.1, 0.0, 0, 0,
                                     0.0, 0.3, 0.1, 0.0, 0, 0};
    static const double k[5] = {40.0, 3.0, 25.0, 0.0, 0.0}, c[5] = {0.7, 0.2, 1.1, 0.0, 0.0};
    static const int ref_law[5] = {0, -1, -1, -1, -1}, load_law[5] = {-1, 1, -1, -1, -1};
    static const double ref_value[5] = {0.0, 0.3, 0.0, 0.0, 0.0};
    static const int input_mode[5] = {LD_INPUT_NONE, LD_INPUT_ADD, LD_INPUT_TARGET,
                                      LD_INPUT_NONE, LD_INPUT_NONE};
    static const int input[5] = {-1, 0, 1, -1, -1};
    static const int law[5] = {LD_FORCE_LINEAR, LD_FORCE_LINEAR, LD_FORCE_LINEAR,
                               LD_FORCE_HERTZ, LD_FORCE_FRICTION};
    static const double law_par[20] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                       2e4, 1.5, 0.3, 0.75, 0.6, 3, 0.75, 0};
    static const double slip[5] = {0, 0, 0, 0, 1.0};
    static const int lbody[1] = {1}, lframe[1] = {1}, llaws[2] = {1, 0};
    static const double lpoint[2] = {0.2, 0.1};
    double g[30], angle_ref[5] = {0, 0, 0, 0, 0}, in[2] = {0.15, 0.05}, ncont[2];
    int active[2] = {0, 1}, fail = -1;
    ld_laws laws;
    ld_forces F;
    ld_forces_run run;
    double q[NQ] = {0.4, 0.1, 0.8, 0.6, 0.9, 0.5, 0.6, -0.8};
    double v[NQ] = {0.3, -0.2, 0.5, -0.4, 0.1, 0.7, -0.2, 0.3};
    double Q[NQ], t = 0.7;
    int i;

    memcpy(g, geom, sizeof g);
    g[16] = cos(0.4); g[17] = sin(0.4);
    ncont[0] = cos(0.2 + PI / 2); ncont[1] = sin(0.2 + PI / 2);   /* the line's normal */
    g[22] = ncont[0]; g[23] = ncont[1];
    g[28] = cos(0.2); g[29] = sin(0.2);   /* the friction's axis: along the line */
    laws.nlaw = 2; laws.kind = kind; laws.start = start; laws.par = par; laws.values = NULL;
    memset(&F, 0, sizeof F);
    F.nrec = 5; F.coord = coord; F.body = body; F.geom = g; F.stiffness = k; F.damping = c;
    F.ref_law = ref_law; F.ref_value = ref_value; F.load_law = load_law;
    F.input_mode = input_mode; F.input = input;
    dense_slots(body, 5);
    F.slot_q = slot_q; F.slot_v = slot_v;
    F.law = law; F.law_par = law_par;
    F.nload = 1; F.load_body = lbody; F.load_point = lpoint; F.load_frame = lframe;
    F.load_laws = llaws; F.load_slot_q = load_slot; F.laws = &laws;
    run.input = in; run.input_active = active; run.angle_ref = angle_ref; run.fail_record = &fail;
    run.impact = NULL;
    run.slip = slip;
    run.gate = NULL;
    ld_forces_accept(&F, &run, q);

    /* 1. Q_q and Q_v against central differences. */
    check_jacobians(&F, &run, t, q, v, NQ, "");

    /* 2. Power: d/dt of the stored energy along a motion + the power P of the records and
     * the load equals Q . v (energy balance of the elements alone). */
    {   /* 5 records, 1 load */
        double z[11], q1[NQ], P;
        double gap = power_gap(&F, &run, t, q, v, NQ, 6, Q, q1, z, &P);
        check(fabs(gap) < 1e-6 * (1 + fabs(P)),
              "dV/dt + Q.v = P (power of the non-conservative parts)");
    }

    /* The contact is closed and pushes: its force along s is positive; the friction is
     * -mu F_N; the rolling coordinate's rate is the slip velocity at the contact point
     * (body 1's material point at C - rho n minus the ground's, along the line). */
    {
        double s[5 * 3 + 2], cx, cy, px, py, vx, vy, omega = 1.7, vr[NQ];
        ld_forces_values(&F, &run, t, q, v, s);
        check(0.75 - s[9] > 1e-3 && s[11] > 0, "contact pressed in and pushing");
        check(fabs(s[14] + 0.6 * s[11]) < 1e-12 * s[11], "sliding friction -mu F_N");
        {
            static const double gate[5] = {1, 1, 1, 0, 1};
            double s_off[5 * 3 + 2];
            run.gate = gate;
            ld_forces_values(&F, &run, t, q, v, s_off);
            run.gate = NULL;
            check(s_off[11] == 0.0 && s_off[14] == 0.0 && s_off[9] == s[9],
                  "a gated contact (swinging foot) applies no normal force and no friction");
        }
        memcpy(vr, v, sizeof vr);   /* a rigid motion of body 1 (|u| = 1 at the state) */
        vr[6] = -omega * q[7];
        vr[7] = omega * q[6];
        ld_forces_values(&F, &run, t, q, vr, s);
        cx = q[4] + 0.1 * q[6];
        cy = q[5] + 0.1 * q[7];
        px = cx - 0.75 * ncont[0];
        py = cy - 0.75 * ncont[1];
        vx = vr[4] - omega * (py - q[5]);
        vy = vr[5] + omega * (px - q[4]);
        check(fabs(s[13] - (vx * cos(0.2) + vy * sin(0.2))) < 1e-12,
              "rolling coordinate's rate = slip velocity at the contact point");
    }

    /* 3. Angles continue over turns: turn body 1 by 7 quarter turns in small steps. */
    {
        double qq[NQ], s[5 * 3 + 2], a0;
        memcpy(qq, q, sizeof qq);
        ld_forces_values(&F, &run, t, qq, v, s);
        a0 = s[3];
        for (i = 1; i <= 70; i++) {
            double a = atan2(-0.8, 0.6) + i * (7 * PI / 2) / 70;
            qq[6] = cos(a); qq[7] = sin(a);
            ld_forces_accept(&F, &run, qq);
        }
        ld_forces_values(&F, &run, t, qq, v, s);
        check(fabs(s[3] - a0 - 7 * PI / 2) < 1e-12, "relative angle tracked over 1.75 turns");
    }

    /* 4. Coincident spring points: a domain error naming the record. */
    {
        double qq[NQ];
        memcpy(qq, q, sizeof qq);
        qq[0] = 0.3 - 0.1 * qq[2] + 0.05 * qq[3];
        qq[1] = -0.2 - 0.1 * qq[3] - 0.05 * qq[2];
        memset(Q, 0, sizeof Q);
        fail = -1;
        check(ld_forces_add(&F, &run, t, qq, v, Q) == LD_ERR_DOMAIN && fail == 0,
              "coincident points: LD_ERR_DOMAIN, record 0");
    }

    spatial_section();
    rod_section();
    clearance_section();
    joint_friction_section();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
