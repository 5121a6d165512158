/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the check unit tests. */
#ifndef BERTH_TESTUTIL_H
#define BERTH_TESTUTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

/* Run one suite and return the process exit status. */
static inline int run_suite (Suite *s)
{
    SRunner *sr = srunner_create (s);
    srunner_run_all (sr, CK_NORMAL);
    int failed = srunner_ntests_failed (sr);
    srunner_free (sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* Path of a file under tests/data (BERTH_TESTDATA), in a static buffer. */
static inline const char *testdata (const char *rel)
{
    static char buf[4096];
    const char *root = getenv ("BERTH_TESTDATA");
    snprintf (buf, sizeof (buf), "%s/%s", root ? root : "tests/data", rel);
    return buf;
}

#endif
