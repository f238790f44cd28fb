/* Kernel build options from the configuration (see build_options.h). */
#include "runtime/build_options.h"

#include <stdio.h>

int pbfcl_build_options(const pbfcl_build_config *cfg, char *buf, size_t size)
{
    int n = snprintf(buf, size,
                     "-cl-std=CL1.2 -DWG_SIZE=%u -DRADIX_BITS=%u -DSORT_ITEMS=%u -DGRID_BITS=%u "
                     "-DMAX_NEIGHBORS=%u -DLOG_NUM_BANKS=%u -DNB_WG_SIZE=%u",
                     cfg->wg_size, cfg->radix_bits, cfg->sort_items, cfg->grid_bits,
                     cfg->max_neighbors, cfg->log_num_banks, cfg->nb_wg_size);
    return (n < 0 || (size_t)n >= size) ? -1 : n;
}
