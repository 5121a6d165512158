/* SPDX-License-Identifier: MIT */
/* Finding the Slurm step an srun started, in `scontrol show step -o` text
 * as Slurm 22.05 prints it (recorded on the local cluster). */
#include <string.h>

#include "srun_steps.h"
#include "testutil.h"

static const char listing[] =
"StepId=2.batch UserId=0 StartTime=2026-12-05T16:12:12 TimeLimit=UNLIMITED State=RUNNING "
"Partition=debug NodeList=vm Nodes=1 CPUs=0 Tasks=1 Name=batch Network=(null) TRES=(null) "
"ResvPorts=(null) CPUFreqReq=Default SrunHost:Pid=(null):0\n"
"StepId=2.0 UserId=0 StartTime=2026-12-05T16:12:12 TimeLimit=UNLIMITED State=RUNNING "
"Partition=debug NodeList=vm Nodes=1 CPUs=2 Tasks=1 Name=sleep Network=(null) "
"TRES=cpu=2,mem=2000M,node=1 ResvPorts=(null) CPUFreqReq=Default Dist=Cyclic "
"SrunHost:Pid=vm:10684\n"
"StepId=2.1 UserId=0 StartTime=2026-12-05T16:12:13 TimeLimit=UNLIMITED State=RUNNING "
"Partition=debug NodeList=vm Nodes=1 CPUs=2 Tasks=1 Name=sleep Network=(null) "
"TRES=cpu=2,mem=2000M,node=1 ResvPorts=(null) CPUFreqReq=Default Dist=Cyclic "
"SrunHost:Pid=nid001234:1068\n"
"StepId=2.12 UserId=0 StartTime=2026-12-05T16:12:13 TimeLimit=UNLIMITED State=RUNNING "
"Partition=debug NodeList=vm Nodes=1 CPUs=2 Tasks=1 Name=sleep SrunHost:Pid=vm:106840";

START_TEST (test_find)
{
    char id[64];
    ck_assert (srun_step_find (listing, "vm", 10684, id, sizeof (id)));
    ck_assert_str_eq (id, "2.0");
    /* the short name against a full one, either way round */
    ck_assert (srun_step_find (listing, "vm.cluster.example", 10684, id, sizeof (id)));
    ck_assert_str_eq (id, "2.0");
    ck_assert (srun_step_find (listing, "nid001234", 1068, id, sizeof (id)));
    ck_assert_str_eq (id, "2.1");
    ck_assert (srun_step_find (listing, "vm", 106840, id, sizeof (id)));
    ck_assert_str_eq (id, "2.12");
}
END_TEST

START_TEST (test_not_found)
{
    char id[64] = "untouched";
    /* another host's srun of the same pid, a pid that is a prefix of one
     * listed, the batch step's "(null):0" */
    ck_assert (!srun_step_find (listing, "nid001235", 10684, id, sizeof (id)));
    ck_assert (!srun_step_find (listing, "vm", 1068, id, sizeof (id)));
    ck_assert (!srun_step_find (listing, "(null)", 0, id, sizeof (id)));
    ck_assert (!srun_step_find (listing, "v", 10684, id, sizeof (id)));
    ck_assert (!srun_step_find ("", "vm", 10684, id, sizeof (id)));
    ck_assert (!srun_step_find ("No steps in the system\n", "vm", 10684, id, sizeof (id)));
    /* too small a buffer: not written past */
    char small[3];
    ck_assert (!srun_step_find (listing, "vm", 106840, small, sizeof (small)));
    ck_assert_str_eq (id, "untouched");
}
END_TEST

START_TEST (test_listed)
{
    /* squeue -h -s -j 2 -o %i, as 22.05 prints it (right-aligned) */
    const char *q = "         2.0\n        2.12\n     2.batch\n";
    ck_assert (srun_step_listed (q, "2.0"));
    ck_assert (srun_step_listed (q, "2.12"));
    ck_assert (srun_step_listed ("2.12", "2.12"));
    ck_assert (!srun_step_listed (q, "2.1"));
    ck_assert (!srun_step_listed (q, "2"));
    ck_assert (!srun_step_listed (q, "12"));
    ck_assert (!srun_step_listed ("", "2.0"));
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("srun_steps");
    TCase *tc = tcase_create ("srun_steps");
    tcase_add_test (tc, test_find);
    tcase_add_test (tc, test_not_found);
    tcase_add_test (tc, test_listed);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
