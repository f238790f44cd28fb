/* Timing helpers with no device state, shared by the core, the programs and the tests: a
 * monotonic wall clock and the median of a sample. */
#ifndef PBFCL_CLOCK_H
#define PBFCL_CLOCK_H

/* A monotonic host clock, in seconds (for wall times beside the device times). */
double pbfcl_wall_seconds(void);

/* Median of n doubles (sorts the array in place). */
double pbfcl_median(double *v, int n);

#endif
