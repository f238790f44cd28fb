/* embed.c: a program that embeds pbfcl through its public API only. It opens a context on
 * the first GPU (or the device named by its first argument), fills the dam-break scene with a
 * sphere the water runs into (a collision shape), runs 60 frames with timers on the last one,
 * follows the highest particle by its id and reads the force of the water on the sphere.
 *
 *   cc embed.c $(pkg-config --cflags --libs pbfcl) -o embed      # or find_package(pbfcl)
 *   ./embed [DEVICE]
 */
#include <pbfcl.h>

#include <stdio.h>
#include <stdlib.h>

/* Prints pbfcl's messages with their level. */
static void log_message(pbfcl_log_level level, const char *message, void *user)
{
    (void)user;
    fprintf(stderr, "[pbfcl %s] %s\n", level == PBFCL_LOG_ERROR ? "error" : "warning", message);
}

/* Reports a failed call and exits. */
static void check(pbfcl_status st, const char *what)
{
    if (st != PBFCL_OK) {
        fprintf(stderr, "embed: %s failed: %s (%s)\n", what, pbfcl_status_name(st),
                pbfcl_status_message(st));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    pbfcl_set_log(log_message, NULL, PBFCL_LOG_WARNING);
    printf("pbfcl %s (header %d.%d.%d)\n", pbfcl_version_string(), PBFCL_VERSION_MAJOR,
           PBFCL_VERSION_MINOR, PBFCL_VERSION_PATCH);

    pbfcl_context_desc cd;
    pbfcl_context_desc_defaults(&cd);
    cd.device = argc > 1 ? argv[1] : NULL;
    pbfcl_context *ctx = NULL;
    check(pbfcl_context_create(PBFCL_VERSION, &cd, &ctx), "pbfcl_context_create");
    char name[256];
    check(pbfcl_context_device_name(ctx, name, sizeof name), "pbfcl_context_device_name");
    printf("device: %s\n", name);

    /* a built-in scene: its parameters and the lattice of its fluid */
    pbfcl_solver_desc sd;
    pbfcl_solver_desc_defaults(&sd);
    float *start = NULL;
    size_t n = 0;
    check(pbfcl_load_scene("dam-break", 4000, &sd.scene, &sd.solver, &start, &n),
          "pbfcl_load_scene");
    sd.capacity = n;
    pbfcl_solver *solver = NULL;
    check(pbfcl_solver_create(ctx, &sd, &solver), "pbfcl_solver_create");
    check(pbfcl_solver_add(solver, start, NULL, n), "pbfcl_solver_add");
    pbfcl_shape_desc ball = {.type = PBFCL_SHAPE_KIND_SPHERE, /* in the wave's way */
                             .name = "ball",
                             .radius = 0.15f,
                             .position = {0.9f, 0.1f, 0.3f},
                             .friction = 0.2f};
    int ball_id;
    check(pbfcl_shape_create(solver, &ball, &ball_id), "pbfcl_shape_create");

    size_t top = 0; /* the particle highest in the column: it must fall */
    for (size_t i = 1; i < n; i++)
        if (start[3 * i + 1] > start[3 * top + 1])
            top = i;
    float *x = malloc(n * 3 * sizeof *x);
    pbfcl_timers timers;
    for (int frame = 1; frame <= 60; frame++)
        check(pbfcl_solver_step(solver, 1.0f / 60.0f, frame == 60 ? &timers : NULL),
              "pbfcl_solver_step");
    check(pbfcl_solver_get_positions(solver, x, n), "pbfcl_solver_get_positions");
    float force[3];
    unsigned touching, inside = 0;
    check(pbfcl_shape_contacts(solver, ball_id, force, &touching, NULL), "pbfcl_shape_contacts");
    for (size_t i = 0; i < n; i++) { /* none in the ball */
        float d[3] = {x[3 * i] - 0.9f, x[3 * i + 1] - 0.1f, x[3 * i + 2] - 0.3f};
        inside += d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < 0.15f * 0.15f;
    }
    printf("the ball: %u particles touching, force (%.2f, %.2f, %.2f) N, %u inside\n", touching,
           force[0], force[1], force[2], inside);
    pbfcl_stats st;
    check(pbfcl_solver_stats(solver, &st), "pbfcl_solver_stats");
    const float *a = start + 3 * top, *b = x + 3 * top;
    printf("%zu particles, 60 frames: particle %zu moved from (%.3f, %.3f, %.3f) to (%.3f, "
           "%.3f, %.3f)\n",
           n, top, a[0], a[1], a[2], b[0], b[1], b[2]);
    printf("last frame: %d substeps, %.3f ms of device time:", timers.substeps, timers.total);
    for (int i = 0; i < pbfcl_solver_timer_count(solver); i++) { /* the stages it ran */
        const char *stage;
        double ms;
        check(pbfcl_solver_timer(solver, i, &stage, &ms), "pbfcl_solver_timer");
        printf(" %s %.3f", stage, ms);
    }
    printf("\ndensity error %.2f %%, max speed %.2f m/s, %u outside, %u NaN\n",
           st.density_error_avg, st.max_speed, st.outside, st.nan);
    int ok = st.nan == 0 && st.outside == 0 && !st.unstable && b[1] < a[1] - 0.05f && inside == 0;
    free(x);
    pbfcl_free(start);
    check(pbfcl_solver_destroy(solver), "pbfcl_solver_destroy");
    check(pbfcl_context_destroy(ctx), "pbfcl_context_destroy");
    printf("%s\n", ok ? "ok" : "FAILED: the fluid did not fall, left the box or entered the ball");
    return ok ? 0 : 1;
}
