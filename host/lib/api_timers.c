/* The stage timers of the public API: after a timed step, the stages it ran (those with a
 * profiling event recorded) and their device time, listed in the order of PBFCL_STAGES
 * (host/core/profile.h) and read by index or by name. */
#include "api_internal.h"
#include "runtime/profile.h"

#include <string.h>

/* The stages that recorded an event since prof's last collect: the events still held, and
 * those read early into flushed_ms as the array filled. Call before pbfcl_profile_collect. */
static void stages_recorded(const pbfcl_profile *prof, bool ran[PBFCL_STAGE_COUNT])
{
    for (int i = 0; i < PBFCL_STAGE_COUNT; i++)
        ran[i] = prof->flushed_ms[i] > 0.0;
    for (int e = 0; e < prof->count; e++)
        ran[prof->stage[e]] = true;
}

cl_int pbfcl_api_timers_collect(pbfcl_api_timers *t, pbfcl_profile *prof, pbfcl_timers *out)
{
    bool ran[PBFCL_STAGE_COUNT];
    stages_recorded(prof, ran);
    double ms[PBFCL_STAGE_COUNT] = {0};
    cl_int err = pbfcl_profile_collect(prof, ms);
    t->count = 0;
    out->total = 0.0;
    if (err != CL_SUCCESS)
        return err;
    for (int i = 0; i < PBFCL_STAGE_COUNT; i++) {
        if (!ran[i])
            continue;
        t->stage[t->count] = i;
        t->ms[t->count++] = ms[i];
        out->total += ms[i];
    }
    return CL_SUCCESS;
}

int pbfcl_solver_timer_count(const pbfcl_solver *s)
{
    const pbfcl_api_timers *t = pbfcl_api_solver_timers("pbfcl_solver_timer_count", s);
    return t ? t->count : 0;
}

pbfcl_status pbfcl_solver_timer(const pbfcl_solver *s, int i, const char **name, double *ms)
{
    const pbfcl_api_timers *t = pbfcl_api_solver_timers("pbfcl_solver_timer", s);
    if (!t)
        return PBFCL_ERR_INVALID_HANDLE;
    CHECK_ARG("pbfcl_solver_timer", i >= 0 && i < t->count,
              "stage %d is not one of the %d stages the last timed step ran "
              "(0 .. pbfcl_solver_timer_count - 1)",
              i, t->count);
    if (name)
        *name = pbfcl_stage_name((pbfcl_stage)t->stage[i]);
    if (ms)
        *ms = t->ms[i];
    return PBFCL_OK;
}

/* The stage called name; PBFCL_STAGE_COUNT if none. */
static int stage_by_name(const char *name)
{
    int k = 0;
    while (k < PBFCL_STAGE_COUNT && strcmp(name, pbfcl_stage_name((pbfcl_stage)k)) != 0)
        k++;
    return k;
}

/* Logs that name is no stage, listing the stages. */
static pbfcl_status unknown_stage(const char *name)
{
    pbfcl_msg m = {0};
    pbfcl_msg_addf(&m, "pbfcl_solver_timer_ms: '%s' is not a stage; the stages are:", name);
    for (int k = 0; k < PBFCL_STAGE_COUNT; k++)
        pbfcl_msg_addf(&m, " %s", pbfcl_stage_name((pbfcl_stage)k));
    pbfcl_msg_log(&m, PBFCL_LOG_ERROR);
    return PBFCL_ERR_BAD_ARGUMENT;
}

pbfcl_status pbfcl_solver_timer_ms(const pbfcl_solver *s, const char *name, double *ms)
{
    const pbfcl_api_timers *t = pbfcl_api_solver_timers("pbfcl_solver_timer_ms", s);
    if (!t)
        return PBFCL_ERR_INVALID_HANDLE;
    CHECK_ARG("pbfcl_solver_timer_ms", name && ms, "%s is NULL", name ? "ms" : "name");
    int stage = stage_by_name(name);
    if (stage == PBFCL_STAGE_COUNT)
        return unknown_stage(name);
    *ms = 0.0;
    for (int i = 0; i < t->count; i++)
        if (t->stage[i] == stage)
            *ms = t->ms[i];
    return PBFCL_OK;
}
