/* Phases' encoding, without a device: pbfcl_make_phase gives FleX's bits (NvFlex.h: group in
 * bits 0-19, self-collide 1 << 20, self-collide-filter 1 << 21, fluid 1 << 22) and refuses a
 * group out of range or an unknown flag with a message; the kernels' decoding (the fluid flag,
 * a body's group) agrees with the API's groups; a checkpoint's old phase numbers convert. */
#include "api_internal.h"
#include "pbfcl_shared.h"
#include "sim/sim.h"
#include "test_util.h"

#include <stdio.h>
#include <string.h>

static char last[1024];

static void keep_message(pbfcl_log_level level, const char *message, void *user)
{
    (void)level;
    (void)user;
    snprintf(last, sizeof last, "%s", message);
}

START_TEST(make_phase_is_flex_bits)
{
    ck_assert_int_eq(PBFCL_PHASE_GROUP_MASK, 0x000fffff);
    ck_assert_int_eq(PBFCL_PHASE_FLAG_SELF_COLLIDE, 0x00100000);
    ck_assert_int_eq(PBFCL_PHASE_FLAG_SELF_COLLIDE_FILTER, 0x00200000);
    ck_assert_int_eq(PBFCL_PHASE_FLAG_FLUID, 0x00400000);
    ck_assert_int_eq(pbfcl_make_phase(5, PBFCL_PHASE_FLAG_SELF_COLLIDE), 0x00100005);
    int fluid = pbfcl_make_phase(0, PBFCL_PHASE_FLAG_FLUID | PBFCL_PHASE_FLAG_SELF_COLLIDE);
    ck_assert_int_eq(fluid, 0x00500000);
    ck_assert_uint_eq((unsigned)fluid, PBFCL_SIM_PHASE_FLUID); /* the kernels' fluid phase */
    ck_assert_int_eq(pbfcl_make_phase(PBFCL_PHASE_GROUP_STATIC, 0), (int)PBFCL_SIM_PHASE_STATIC);
    ck_assert_int_eq(pbfcl_make_phase(PBFCL_PHASE_GROUP_MASK, PBFCL_PHASE_FLAG_FLUID), 0x004fffff);
}
END_TEST

START_TEST(make_phase_refuses_bad_input)
{
    pbfcl_set_log(keep_message, NULL, PBFCL_LOG_ERROR);
    ck_assert_int_eq(pbfcl_make_phase(-1, 0), PBFCL_PHASE_INVALID);
    ck_assert_ptr_nonnull(strstr(last, "group -1 is out of range"));
    ck_assert_int_eq(pbfcl_make_phase(0x100000, 0), PBFCL_PHASE_INVALID); /* not self-collide */
    ck_assert_ptr_nonnull(strstr(last, "group 1048576 is out of range"));
    ck_assert_int_eq(pbfcl_make_phase(3, 1 << 23), PBFCL_PHASE_INVALID);
    ck_assert_ptr_nonnull(strstr(last, "unknown bits 0x800000"));
    ck_assert_int_eq(pbfcl_make_phase(3, 1), PBFCL_PHASE_INVALID); /* a group is no flag */
    ck_assert_ptr_nonnull(strstr(last, "unknown bits 0x1"));
    pbfcl_set_log(NULL, NULL, PBFCL_LOG_ERROR);
}
END_TEST

/* The short numbers of pbfcl_solver_set_phases and the kernels' body of a phase. */
START_TEST(short_numbers_and_bodies)
{
    ck_assert_uint_eq((unsigned)pbfcl_api_phase_from_short(PBFCL_PHASE_FLUID),
                      PBFCL_SIM_PHASE_FLUID);
    ck_assert_uint_eq((unsigned)pbfcl_api_phase_from_short(PBFCL_PHASE_STATIC),
                      PBFCL_SIM_PHASE_STATIC);
    ck_assert_int_eq(pbfcl_api_phase_from_short(PBFCL_PHASE_BODY(6)), 7);
    ck_assert_int_eq(pbfcl_api_phase_to_short(7 | PBFCL_PHASE_FLAG_SELF_COLLIDE), 7);
    ck_assert_int_eq(pbfcl_api_phase_to_short((int)PBFCL_SIM_PHASE_FLUID), PBFCL_PHASE_FLUID);
    ck_assert_int_eq(pbfcl_api_phase_to_short((int)PBFCL_SIM_PHASE_STATIC), PBFCL_PHASE_STATIC);
    ck_assert_uint_eq(PBFCL_SIM_PHASE_BODY_OF(7u | PBFCL_PHASE_SELF_COLLIDE_BIT), 6u);
    ck_assert_uint_eq(PBFCL_SIM_PHASE_BODY_OF(PBFCL_SIM_PHASE_FLUID), PBFCL_SIM_NO_BODY);
    ck_assert_uint_gt(PBFCL_SIM_PHASE_BODY_OF(PBFCL_SIM_PHASE_STATIC), 0xffffdu); /* no body */
    /* every phase is exact as the kernels' float tag (below 2^24) */
    unsigned top = PBFCL_PHASE_GROUP_BITS | PBFCL_PHASE_FLUID_BIT | PBFCL_PHASE_SELF_COLLIDE_BIT |
                   PBFCL_PHASE_SELF_COLLIDE_FILTER_BIT;
    ck_assert_uint_eq((unsigned)(float)top, top);
}
END_TEST

/* A checkpoint's phases from before the flags (0 fluid, b + 1, 0xffffffff static) convert;
 * today's are left as they are. */
START_TEST(old_checkpoint_phases_upgrade)
{
    ck_assert_uint_eq(pbfcl_sim_phase_upgrade(0u), PBFCL_SIM_PHASE_FLUID);
    ck_assert_uint_eq(pbfcl_sim_phase_upgrade(0xffffffffu), PBFCL_SIM_PHASE_STATIC);
    ck_assert_uint_eq(pbfcl_sim_phase_upgrade(3u), 3u);
    ck_assert_uint_eq(pbfcl_sim_phase_upgrade(PBFCL_SIM_PHASE_FLUID), PBFCL_SIM_PHASE_FLUID);
    ck_assert_uint_eq(pbfcl_sim_phase_upgrade(PBFCL_SIM_PHASE_STATIC), PBFCL_SIM_PHASE_STATIC);
    ck_assert_uint_eq(pbfcl_sim_phase_upgrade(3u | PBFCL_PHASE_SELF_COLLIDE_BIT),
                      3u | PBFCL_PHASE_SELF_COLLIDE_BIT);
}
END_TEST

static Suite *phases_suite(void)
{
    Suite *s = suite_create("phases");
    TCase *t = tcase_create("encoding");
    tcase_add_test(t, make_phase_is_flex_bits);
    tcase_add_test(t, make_phase_refuses_bad_input);
    tcase_add_test(t, short_numbers_and_bodies);
    tcase_add_test(t, old_checkpoint_phases_upgrade);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return test_run_suite(phases_suite(), false);
}
