/* The overlap of a split simulation (docs/DISTRIBUTED.md, "Overlap"): the interior computed
 * while the ghosts' values travel. After each search's sort the owned particles are listed by
 * region on the device (sim/regions.h): the boundary lists a ghost among its neighbours, the
 * interior none. At a values point (after lambda, delta, collide) the exchange is split in two:
 * the receives posted, the rows sent gathered, read and sent, and the hook returns with the
 * messages in flight (pbfcl_sim_sync_started); the next stage runs over the interior, whose
 * neighbours are all owned and complete, then calls PBFCL_SYNC_WAIT, which waits for the
 * messages and scatters the ghosts' rows, and runs over the boundary. Each particle is
 * computed by the same code from the same values as without it, so the frames are the same to
 * the byte; the ghosts are not computed (their values are the owners', written at the next
 * exchange). The update's exchange stays whole (vorticity is not split). */
#include "dist_internal.h"

#include "runtime/pbfcl_error.h"

#include <string.h>

bool dist_overlap_point(const pbfcl_dist *d, pbfcl_sim_sync_point point)
{
    return !d->overlap.off && (point == PBFCL_SYNC_LAMBDA || point == PBFCL_SYNC_DELTA ||
                               point == PBFCL_SYNC_COLLIDE || point == PBFCL_SYNC_WAIT);
}

void pbfcl_dist_set_overlap(pbfcl_dist *d, bool on)
{
    d->overlap.off = !on;
}

bool pbfcl_dist_overlap(const pbfcl_dist *d)
{
    return !d->overlap.off;
}

bool pbfcl_dist_parse_overlap(const char *val, bool *off)
{
    if (strcmp(val, "on") && strcmp(val, "off")) {
        pbfcl_errorf("--overlap: '%s' is not valid; expected on or off", val);
        return false;
    }
    *off = !strcmp(val, "off");
    return true;
}

pbfcl_status dist_overlap_sorted(pbfcl_dist *d)
{
    dist_overlap *o = &d->overlap;
    pbfcl_sim_view v;
    pbfcl_sim_view_get(d->sim, &v);
    if (o->off || v.scene->solver.method != PBFCL_METHOD_PBF) /* SPH's exchanges stay whole */
        return PBFCL_OK;
    if (!o->made) {
        PBFCL_TRY(pbfcl_regions_create(&o->regions, v.cl, pbfcl_sim_capacity(d->sim)));
        o->made = true;
    }
    /* the exchange's flags are scratch between its classifications (2n + 1 uints) */
    PBFCL_TRY(pbfcl_regions_make(&o->regions, d->xchg.ghost_buf, v.grid->neighbor_count_buf,
                                 v.grid->neighbor_buf, v.n, PBFCL_SIM_MAX_NEIGHBORS,
                                 d->xchg.flags_buf, &o->boundary, &o->interior));
    d->traffic.interior += o->interior;
    d->traffic.boundary += o->boundary;
    return PBFCL_OK;
}

pbfcl_status dist_overlap_sync(pbfcl_dist *d, pbfcl_sim_sync_point point, const cl_mem *bufs,
                               const size_t *elem, int count)
{
    if (point == PBFCL_SYNC_WAIT)
        return dist_values_end(d, false);
    PBFCL_TRY(dist_values_begin(d, bufs, elem, count));
    if (point == PBFCL_SYNC_DELTA) /* before collide reads them, after delta wrote them */
        PBFCL_TRY(dist_mark_all_moved(d));
    dist_overlap *o = &d->overlap;
    pbfcl_sim_lists l = {o->regions.slots_buf, o->boundary, o->interior, 0, o->boundary};
    pbfcl_sim_sync_started(d->sim, &l);
    d->traffic.overlapped++;
    return PBFCL_OK;
}

void dist_overlap_release(pbfcl_dist *d)
{
    if (d->values.written) {
        clWaitForEvents(1, &d->values.written);
        clReleaseEvent(d->values.written);
        d->values.written = NULL;
    }
    if (d->overlap.made)
        pbfcl_regions_destroy(&d->overlap.regions);
    d->overlap.made = false;
}
