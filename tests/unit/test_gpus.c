/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "gpus.h"
#include "testutil.h"

static struct gpu_facts detect (const char *fixture)
{
    char proc[4200], sys[4200];
    struct gpu_facts f;
    snprintf (proc, sizeof (proc), "%s/proc", testdata (fixture));
    snprintf (sys, sizeof (sys), "%s/sys", testdata (fixture));
    ck_assert_int_eq (gpus_detect (proc, sys, &f, NULL), 0);
    return f;
}

START_TEST (nvidia_from_proc_driver)
{
    struct gpu_facts f = detect ("gpus/nvidia");
    ck_assert_int_eq (f.vendor, GPU_VENDOR_NVIDIA);
    ck_assert_int_eq (f.count, 4);
    ck_assert_str_eq (f.gpus[0].bus_id, "0000:03:00.0");
    ck_assert_str_eq (f.gpus[0].model, "NVIDIA A100-SXM4-40GB");
    ck_assert_str_eq (f.gpus[0].uuid,
                      "GPU-00000000-1111-2222-3333-444444444444");
    ck_assert_int_eq (f.gpus[0].minor, 3);
    ck_assert_int_eq (f.gpus[0].numa_node, 3);
    ck_assert_str_eq (f.gpus[0].local_cpulist, "48-63,176-191");
    ck_assert_str_eq (f.gpus[1].local_cpulist, "32-47,160-175");
    /* the platform does not say (-1), and no sysfs entry at all */
    ck_assert_int_eq (f.gpus[2].numa_node, -1);
    ck_assert_str_eq (f.gpus[3].bus_id, "0000:c1:00.0");
    ck_assert_int_eq (f.gpus[3].minor, 0);
    ck_assert_int_eq (f.gpus[3].numa_node, -1);
    ck_assert_str_eq (f.gpus[3].local_cpulist, "");
    ck_assert_str_eq (gpus_visible_devices_var (f.vendor),
                      "CUDA_VISIBLE_DEVICES");
    gpu_facts_free (&f);
    ck_assert_int_eq (f.count, 0);
}
END_TEST

START_TEST (amd_from_kfd_topology)
{
    struct gpu_facts f = detect ("gpus/amd");
    ck_assert_int_eq (f.vendor, GPU_VENDOR_AMD);
    ck_assert_int_eq (f.count, 3); /* the CPU node (gpu_id 0) is not one */
    ck_assert_str_eq (f.gpus[0].model, "gfx90a");
    ck_assert_str_eq (f.gpus[0].bus_id, "0000:c1:00.0");
    ck_assert_str_eq (f.gpus[0].uuid, "12345678901");
    ck_assert_int_eq (f.gpus[0].minor, -1);
    ck_assert_int_eq (f.gpus[0].numa_node, 3);
    ck_assert_str_eq (f.gpus[0].local_cpulist, "48-55,112-119");
    ck_assert_str_eq (f.gpus[1].bus_id, "0000:81:00.0");
    /* node 10 after node 2: numeric order */
    ck_assert_str_eq (f.gpus[2].bus_id, "0000:41:00.0");
    ck_assert_str_eq (f.gpus[2].uuid, "123456789010");
    ck_assert_str_eq (gpus_visible_devices_var (f.vendor),
                      "ROCR_VISIBLE_DEVICES");
    gpu_facts_free (&f);
}
END_TEST

START_TEST (no_gpus_is_not_an_error)
{
    struct gpu_facts f = detect ("gpus/none");
    ck_assert_int_eq (f.vendor, GPU_VENDOR_NONE);
    ck_assert_int_eq (f.count, 0);
    ck_assert_ptr_null (gpus_visible_devices_var (f.vendor));
    gpu_facts_free (&f);
    ck_assert_int_eq (gpus_detect ("/nonexistent", "/nonexistent", &f, NULL),
                      0);
    ck_assert_int_eq (f.count, 0);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("gpus");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, nvidia_from_proc_driver);
    tcase_add_test (tc, amd_from_kfd_topology);
    tcase_add_test (tc, no_gpus_is_not_an_error);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
