/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "idset.h"
#include "testutil.h"
#include "topology.h"

/* Physical cores of a recorded tree for the usable ids in idset text, as
 * idset text. */
static const char *cores_of (const char *tree, const char *usable)
{
    static char buf[4096];
    int *ids, n, *cores, ncores;
    ck_assert_int_eq (idset_parse (usable, &ids, &n, NULL), 0);
    ck_assert_int_eq (topology_physical_cores (testdata (tree), ids, n,
                                               &cores, &ncores, NULL), 0);
    idset_format (cores, ncores, buf, sizeof (buf));
    free (ids);
    free (cores);
    return buf;
}

START_TEST (perlmutter_siblings_above)
{
    ck_assert_str_eq (cores_of ("sysfs/perlmutter", "0-255"), "0-127");
    /* Enumeration order does not matter: the sibling names the core. */
    ck_assert_str_eq (cores_of ("sysfs/perlmutter", "130,2,129,1"), "1-2");
}
END_TEST

START_TEST (frontier_every_eighth_held_back)
{
    /* Affinity leaves out cores 0, 8, ..., 56 and their siblings. */
    char usable[1024] = "";
    for (int i = 0; i < 128; i++)
        if ((i % 64) % 8 != 0) {
            char item[8];
            snprintf (item, sizeof (item), "%s%d", *usable ? "," : "", i);
            strcat (usable, item);
        }
    ck_assert_str_eq (cores_of ("sysfs/frontier", usable),
                      "1-7,9-15,17-23,25-31,33-39,41-47,49-55,57-63");
}
END_TEST

START_TEST (aurora_zero_and_52_held_back)
{
    ck_assert_str_eq (cores_of ("sysfs/aurora", "1-51,53-103,105-155,157-207"),
                      "1-51,53-103");
}
END_TEST

START_TEST (interleaved_and_quad_siblings)
{
    ck_assert_str_eq (cores_of ("sysfs/interleaved", "0-7"), "0,2,4,6");
    ck_assert_str_eq (cores_of ("sysfs/interleaved", "3,5"), "3,5");
    ck_assert_str_eq (cores_of ("sysfs/quad", "0-7"), "0,2");
}
END_TEST

START_TEST (held_back_sibling_never_names_a_core)
{
    /* Only the upper thread of core 0 usable: it names the core. */
    ck_assert_str_eq (cores_of ("sysfs/perlmutter", "128,1,129"), "1,128");
}
END_TEST

START_TEST (unreadable_siblings_file_is_own_core)
{
    ck_assert_str_eq (cores_of ("sysfs/missing", "0-3"), "0,2-3");
    ck_assert_str_eq (cores_of ("sysfs/no-such-tree", "5,1"), "1,5");
    ck_assert_str_eq (cores_of ("sysfs/missing", ""), "");
}
END_TEST

START_TEST (affinity_ids_of_this_process)
{
    int *ids, n;
    ck_assert_int_eq (topology_affinity_ids (&ids, &n, NULL), 0);
    ck_assert_int_ge (n, 1);
    for (int i = 1; i < n; i++)
        ck_assert_int_lt (ids[i - 1], ids[i]);
    free (ids);
}
END_TEST

static const char *usable (const int *phys, int n, int cpn, char *warn,
                           size_t wsize)
{
    static char buf[4096];
    int *ids, count;
    berth_error_t err;
    ck_assert_int_eq (topology_usable_core_ids (phys, n, cpn, &ids, &count,
                                                warn, wsize, &err), 0);
    idset_format (ids, count, buf, sizeof (buf));
    free (ids);
    return buf;
}

START_TEST (usable_core_ids_reconcile_with_config)
{
    int phys[64];
    char w[512];
    for (int i = 0; i < 64; i++)
        phys[i] = 2 * i + 1;
    /* more: the first cores_per_node, no warning */
    ck_assert_str_eq (usable (phys, 64, 4, w, sizeof (w)), "1,3,5,7");
    ck_assert_str_eq (w, "");
    /* equal, and unset: all of them */
    ck_assert_str_eq (usable (phys, 3, 3, w, sizeof (w)), "1,3,5");
    ck_assert_str_eq (w, "");
    ck_assert_str_eq (usable (phys, 3, 0, w, sizeof (w)), "1,3,5");
    ck_assert_str_eq (w, "");
    /* fewer (half or more): use them, warn */
    ck_assert_str_eq (usable (phys, 3, 6, w, sizeof (w)), "1,3,5");
    ck_assert_ptr_nonnull (strstr (w, "only 3 physical cores of "
                                   "cores_per_node = 6; using those 3"));
    /* far fewer (less than half): number from zero, warn */
    ck_assert_str_eq (usable (phys, 2, 5, w, sizeof (w)), "0-4");
    ck_assert_ptr_nonnull (strstr (w, "only 2 physical cores, less than half "
                                   "of cores_per_node = 5"));
    ck_assert_ptr_nonnull (strstr (w, "numbering cores 0-4"));
    ck_assert_str_eq (usable (NULL, 0, 4, w, sizeof (w)), "0-3");
}
END_TEST

START_TEST (usable_core_ids_none_at_all)
{
    int *ids = (int *) 1, count = -1;
    char w[64];
    berth_error_t err;
    ck_assert_int_eq (topology_usable_core_ids (NULL, 0, 0, &ids, &count, w,
                                                sizeof (w), &err), -1);
    ck_assert_ptr_nonnull (strstr (err.text, "no usable cores"));
    ck_assert_ptr_eq (ids, (int *) 1);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("topology");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, perlmutter_siblings_above);
    tcase_add_test (tc, frontier_every_eighth_held_back);
    tcase_add_test (tc, aurora_zero_and_52_held_back);
    tcase_add_test (tc, interleaved_and_quad_siblings);
    tcase_add_test (tc, held_back_sibling_never_names_a_core);
    tcase_add_test (tc, unreadable_siblings_file_is_own_core);
    tcase_add_test (tc, affinity_ids_of_this_process);
    tcase_add_test (tc, usable_core_ids_reconcile_with_config);
    tcase_add_test (tc, usable_core_ids_none_at_all);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
