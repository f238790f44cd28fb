/* embed_mpi.c: a program that splits a pbfcl simulation over MPI ranks through the public API
 * only (pbfcl.h and pbfcl_mpi.h). Every rank opens a context on the first GPU (or the device
 * named by its first argument), loads the same dam break, and the ranks run it together for 30
 * frames; rank 0 gathers every particle by id and checks that the water fell and stayed in the
 * box, against the statistics reduced over the ranks.
 *
 *   find_package(pbfcl) ... target_link_libraries(embed_mpi PRIVATE pbfcl::pbfcl_dist)
 *   mpirun -np 2 ./embed_mpi [DEVICE]
 */
#include <pbfcl.h>
#include <pbfcl_mpi.h>

#include <stdio.h>
#include <stdlib.h>

/* Reports a failed call and ends every rank (the others would wait for this one). */
static void check(pbfcl_status st, const char *what)
{
    if (st != PBFCL_OK) {
        fprintf(stderr, "embed_mpi: %s failed: %s (%s)\n", what, pbfcl_status_name(st),
                pbfcl_status_message(st));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);

    pbfcl_context_desc cd;
    pbfcl_context_desc_defaults(&cd);
    cd.device = argc > 1 ? argv[1] : NULL;
    pbfcl_context *ctx = NULL;
    check(pbfcl_context_create(PBFCL_VERSION, &cd, &ctx), "pbfcl_context_create");

    /* the same scene and particles on every rank; each rank keeps its slab's */
    pbfcl_solver_desc sd;
    pbfcl_solver_desc_defaults(&sd);
    float *start = NULL;
    size_t n = 0;
    check(pbfcl_load_scene("dam-break", 3000, &sd.scene, &sd.solver, &start, &n),
          "pbfcl_load_scene");
    sd.capacity = 0; /* each rank's room: all n */
    pbfcl_dist_solver *s = NULL;
    check(pbfcl_dist_solver_create(MPI_COMM_WORLD, ctx, &sd, start, NULL, n, &s),
          "pbfcl_dist_solver_create");
    for (int frame = 0; frame < 30; frame++)
        check(pbfcl_dist_solver_step(s), "pbfcl_dist_solver_step");

    size_t local = 0, total = 0;
    check(pbfcl_dist_solver_count(s, &local, &total), "pbfcl_dist_solver_count");
    unsigned long mine = local, sum = 0;
    MPI_Reduce(&mine, &sum, 1, MPI_UNSIGNED_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    pbfcl_stats st;
    check(pbfcl_dist_solver_stats(s, &st), "pbfcl_dist_solver_stats");
    float *x = rank == 0 ? malloc(3 * n * sizeof *x) : NULL;
    if (rank == 0 && !x)
        check(PBFCL_ERR_OUT_OF_MEMORY, "malloc");
    check(pbfcl_dist_solver_gather(s, x, NULL, NULL), "pbfcl_dist_solver_gather");

    int ok = 1;
    if (rank == 0) {
        double y0 = 0, y1 = 0; /* the mean height, before and after */
        unsigned outside = 0;
        for (size_t i = 0; i < n; i++) {
            y0 += start[3 * i + 1] / (double)n;
            y1 += x[3 * i + 1] / (double)n;
            for (int a = 0; a < 3; a++)
                outside += !(x[3 * i + a] >= sd.scene.domain_min[a] - 1e-3f &&
                             x[3 * i + a] <= sd.scene.domain_max[a] + 1e-3f);
        }
        printf("%zu particles on %d ranks, 30 frames: the ranks own %lu, mean height %.3f -> "
               "%.3f m, %u outside the box, %u NaN, density error %.2f %%\n",
               n, ranks, sum, y0, y1, outside, st.nan, st.density_error_avg);
        ok = sum == n && total == n && outside == 0 && st.nan == 0 && y1 < y0 - 0.01;
        printf("%s\n", ok ? "ok" : "FAILED: particles lost, outside the box or not falling");
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(x);
    pbfcl_free(start);
    check(pbfcl_dist_solver_destroy(s), "pbfcl_dist_solver_destroy");
    check(pbfcl_context_destroy(ctx), "pbfcl_context_destroy");
    MPI_Finalize();
    return ok ? 0 : 1;
}
