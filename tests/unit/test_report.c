/* SPDX-License-Identifier: MIT */
/* berth report's pure parts: reading an events log into steps, lanes,
 * the summary figures, and the SVG/HTML pictures. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_events.h"
#include "report_svg.h"
#include "testutil.h"

#define HAS(text, want) ck_assert_msg (strstr (text, want), "missing [%s] in:\n%s", want, text)

static char *slurp (const char *path)
{
    FILE *f = fopen (path, "r");
    ck_assert_msg (f != NULL, "cannot open %s", path);
    char *buf = calloc (1, 1 << 16);
    size_t n = fread (buf, 1, (1 << 16) - 1, f);
    buf[n] = '\0';
    fclose (f);
    return buf;
}

static void load_small (struct report_run *run)
{
    berth_error_t err;
    char *text = slurp (testdata ("report/small.jsonl"));
    ck_assert_int_eq (report_parse (text, run, &err), 0);
    free (text);
}

static const struct report_step *step (const struct report_run *run, const char *label)
{
    for (int i = 0; i < run->nsteps; i++)
        if (run->steps[i].label && !strcmp (run->steps[i].label, label))
            return &run->steps[i];
    ck_abort_msg ("no step %s", label);
    return NULL;
}

START_TEST (test_parse_steps)
{
    struct report_run run;
    load_small (&run);
    ck_assert_int_eq (run.nsteps, 3);
    ck_assert_int_eq (run.nnodes, 2);
    ck_assert_str_eq (run.nodes[0].name, "n1");
    ck_assert_int_eq (run.nodes[0].ncores, 4);       /* 0-3 seen */
    ck_assert_int_eq (run.nodes[1].ncores, 2);
    ck_assert_int_eq (run.refused, 1);
    ck_assert (run.t0 == 100.0 && run.t1 == 110.0);
    const struct report_step *big = step (&run, "ocean & <big>");
    ck_assert (big->asked == 101.0 && big->start == 105.0 && big->end == 110.0);
    ck_assert_int_eq (big->nspans, 2);
    ck_assert_str_eq (big->lease, "L3");
    const struct report_step *m = step (&run, "mesh_1");
    ck_assert (m->asked == m->start && m->end == 104.0 && m->released);
    report_run_free (&run);
}
END_TEST

START_TEST (test_open_lease_ends_with_log)
{
    struct report_run run;
    berth_error_t err;
    const char *text =
        "{\"event\":\"granted\",\"time\":10,\"lease\":\"L1\",\"label\":null,"
        "\"placement\":{\"nodes\":[\"a\"],\"cores\":[[3,1]],\"gpus\":1,\"gpu_ids\":[0]}}\n"
        "{\"event\":\"waited\",\"time\":12.5,\"label\":\"x\",\"position\":1,\"why\":\"full\"}\n";
    ck_assert_int_eq (report_parse (text, &run, &err), 0);
    ck_assert_int_eq (run.nsteps, 1);
    ck_assert (!run.steps[0].released && run.steps[0].end == 12.5);
    ck_assert_ptr_null (run.steps[0].label);
    ck_assert_int_eq (run.steps[0].spans[0].cores[0], 1);     /* sorted */
    ck_assert_int_eq (run.steps[0].gpus, 1);
    report_run_free (&run);
}
END_TEST

START_TEST (test_parse_errors)
{
    struct report_run run;
    berth_error_t err;
    ck_assert_int_eq (report_parse ("", &run, &err), -1);
    HAS (err.text, "the events log is empty");
    ck_assert_int_eq (report_parse ("\n  \n", &run, &err), -1);
    HAS (err.text, "empty");
    ck_assert_int_eq (report_parse ("{\"event\":\"granted\",\"time\":1,\"lease\":\"L1\","
                                    "\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]],\"gpus\":0}}\n"
                                    "{not json\n", &run, &err), -1);
    HAS (err.text, "line 2 is not JSON");
    ck_assert_int_eq (report_parse ("[1,2]\n", &run, &err), -1);
    HAS (err.text, "line 1 is not an event");
    ck_assert_int_eq (report_parse ("{\"op\":\"status\"}\n", &run, &err), -1);
    HAS (err.text, "is this berthd's events.jsonl?");
    ck_assert_int_eq (report_parse ("{\"event\":\"granted\",\"time\":\"soon\"}\n", &run, &err), -1);
    HAS (err.text, "line 1: ");
    HAS (err.text, "time");
    ck_assert_int_eq (report_parse ("{\"event\":\"granted\",\"time\":1,\"lease\":\"L1\"}\n",
                                    &run, &err), -1);
    HAS (err.text, "line 1: ");
}
END_TEST

START_TEST (test_lanes)
{
    struct report_run run;
    load_small (&run);
    report_layout (&run);
    /* n1: mesh [100,104], viz [102,108], ocean waits from 101 -> lane 2 */
    const struct report_step *m = step (&run, "mesh_1"), *v = step (&run, "viz"),
                             *o = step (&run, "ocean & <big>");
    ck_assert_int_eq (m->spans[0].lane, 0);
    ck_assert_int_eq (o->spans[0].lane, 1);
    ck_assert_int_eq (v->spans[0].lane, 2);
    ck_assert_int_eq (run.nodes[0].nlanes, 3);
    ck_assert_int_eq (run.nodes[1].nlanes, 1);
    report_run_free (&run);
}
END_TEST

START_TEST (test_lanes_reuse)
{
    struct report_run run;
    berth_error_t err;
    char text[4096] = "";
    for (int i = 0; i < 4; i++) {    /* back to back on one node: one lane */
        char line[512];
        snprintf (line, sizeof (line),
                  "{\"event\":\"granted\",\"time\":%d,\"lease\":\"L%d\",\"label\":\"s\","
                  "\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]],\"gpus\":0}}\n"
                  "{\"event\":\"released\",\"time\":%d,\"lease\":\"L%d\",\"reason\":\"released\"}\n",
                  i * 10, i, i * 10 + 10, i);
        strcat (text, line);
    }
    ck_assert_int_eq (report_parse (text, &run, &err), 0);
    report_layout (&run);
    ck_assert_int_eq (run.nodes[0].nlanes, 1);
    struct report_summary s;
    report_summarise (&run, &s);
    ck_assert (fabs (s.utilisation - 1.0) < 1e-9);
    ck_assert_int_eq (s.peak_cores, 1);
    report_run_free (&run);
}
END_TEST

START_TEST (test_summary)
{
    struct report_run run;
    load_small (&run);
    struct report_summary s;
    report_summarise (&run, &s);
    ck_assert (s.makespan == 10.0);
    ck_assert_int_eq (s.cores, 6);
    /* held: mesh 2x4 + viz 2x6 + ocean 4x5 = 40 core-s of 60 */
    ck_assert (fabs (s.utilisation - 40.0 / 60.0) < 1e-9);
    ck_assert (s.longest_wait == 4.0);
    ck_assert_str_eq (s.longest_wait_label, "ocean & <big>");
    ck_assert_int_eq (s.waited, 1);
    ck_assert_int_eq (s.peak_cores, 6);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    report_summary_print (f, &run, &s);
    fclose (f);
    HAS (buf, "steps 3 on 2 nodes, 6 cores (1 refused)");
    HAS (buf, "makespan 10s");
    HAS (buf, "mean utilisation 66.7%");
    HAS (buf, "longest wait 4s (4.0 s, ocean & <big>)");
    free (buf);
    report_run_free (&run);
}
END_TEST

START_TEST (test_allocation)
{
    struct report_run run;
    berth_error_t err;
    load_small (&run);
    json_t *st = json_pack ("{s:{s:[{s:s s:s}, {s:s s:s}, {s:s s:s}]}}", "allocation", "nodes",
                            "name", "n0", "cores", "0-7", "name", "n2", "cores", "0-7",
                            "name", "n1", "cores", "0-7");
    ck_assert_int_eq (report_set_allocation (&run, st, &err), 0);
    ck_assert_int_eq (run.nnodes, 3);
    ck_assert_str_eq (run.nodes[2].name, "n1");
    ck_assert_int_eq (run.nodes[2].ncores, 8);
    const struct report_step *o = step (&run, "ocean & <big>");
    ck_assert_int_eq (o->spans[0].node, 2);     /* n1 moved to the allocation's order */
    ck_assert_int_eq (o->spans[1].node, 1);
    struct report_summary s;
    report_summarise (&run, &s);
    ck_assert_int_eq (s.cores, 24);
    json_decref (st);
    /* errors leave the run as it was */
    st = json_pack ("{s:[{s:s s:s}]}", "nodes", "name", "n9", "cores", "0-7");
    ck_assert_int_eq (report_set_allocation (&run, st, &err), -1);
    HAS (err.text, "steps on node n2, which the allocation does not hold");
    json_decref (st);
    ck_assert_int_eq (run.nnodes, 3);
    st = json_pack ("{s:[{s:s}]}", "nodes", "name", "n1");
    ck_assert_int_eq (report_set_allocation (&run, st, &err), -1);
    HAS (err.text, "allocation node 1 lacks a \"name\" or a \"cores\" id set");
    json_decref (st);
    st = json_pack ("{s:[{s:s s:s}]}", "nodes", "name", "n1", "cores", "7-x");
    ck_assert_int_eq (report_set_allocation (&run, st, &err), -1);
    HAS (err.text, "allocation node n1: cores: ");
    json_decref (st);
    st = json_pack ("{s:{}}", "allocation");
    ck_assert_int_eq (report_set_allocation (&run, st, &err), -1);
    HAS (err.text, "no \"nodes\" array");
    json_decref (st);
    report_run_free (&run);
}
END_TEST

static char *picture (struct report_run *run, bool cores, bool html)
{
    struct report_summary s;
    report_layout (run);
    report_summarise (run, &s);
    struct report_picture o = { cores, "t<1>" };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    (html ? report_html : report_svg) (f, run, &s, &o);
    fclose (f);
    return buf;
}

static int count (const char *text, const char *what)
{
    int n = 0;
    for (const char *p = strstr (text, what); p; p = strstr (p + 1, what))
        n++;
    return n;
}

START_TEST (test_svg)
{
    struct report_run run;
    load_small (&run);
    char *svg = picture (&run, false, false);
    ck_assert (!strncmp (svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39));
    HAS (svg, "t&lt;1&gt; \u2014 3 steps on 2 nodes");
    HAS (svg, "makespan 10s \u00b7 mean utilisation 66.7% of 6 cores");
    HAS (svg, "longest wait 4s (ocean &amp; &lt;big&gt;)");
    ck_assert_int_eq (count (svg, "<g class=\"step\">"), 4);   /* ocean on 2 nodes */
    ck_assert_int_eq (count (svg, "<rect class=\"wait\""), 2 + 1);  /* + the legend */
    ck_assert_int_eq (count (svg, "<path class=\"held\""), 2 + 1);
    HAS (svg, ">mesh_1</text>");
    HAS (svg, "<title>viz \u00b7 L2 \u00b7 2 cores on 1 node \u00b7 2s to 8s</title>");
    ck_assert (!strstr (svg, "<big>"));
    ck_assert (strstr (svg, "</svg>\n") && !strstr (svg, "<html"));
    free (svg);
    svg = picture (&run, true, false);
    HAS (svg, "one row per core");
    HAS (svg, "<text class=\"coreid\"");
    ck_assert_int_eq (count (svg, "<g class=\"step\">"), 4);
    free (svg);
    char *html = picture (&run, false, true);
    ck_assert (!strncmp (html, "<!DOCTYPE html>", 15));
    HAS (html, "<title>t&lt;1&gt;</title>");
    HAS (html, "mean utilisation 66.7%");
    HAS (html, "<svg xmlns=");
    HAS (html, "</svg>\n</body></html>\n");
    free (html);
    report_run_free (&run);
}
END_TEST

START_TEST (test_svg_hides_what_does_not_fit)
{
    struct report_run run;
    berth_error_t err;
    /* a 1 s step in a 1000 s run: its bar is ~1 px, far too narrow for its label */
    const char *text =
        "{\"event\":\"granted\",\"time\":0,\"lease\":\"L1\",\"label\":\"tiny_step_label\","
        "\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]],\"gpus\":0}}\n"
        "{\"event\":\"released\",\"time\":1,\"lease\":\"L1\",\"reason\":\"released\"}\n"
        "{\"event\":\"granted\",\"time\":1,\"lease\":\"L2\",\"label\":\"long_enough_\xc3\xa9t\xc3\xa9_label_for_a_cut\","
        "\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]],\"gpus\":0}}\n"
        "{\"event\":\"released\",\"time\":120,\"lease\":\"L2\",\"reason\":\"released\"}\n"
        "{\"event\":\"granted\",\"time\":999,\"lease\":\"L3\",\"label\":\"end\","
        "\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]],\"gpus\":0}}\n"
        "{\"event\":\"released\",\"time\":1000,\"lease\":\"L3\",\"reason\":\"released\"}\n";
    ck_assert_int_eq (report_parse (text, &run, &err), 0);
    char *svg = picture (&run, false, false);
    ck_assert (!strstr (svg, ">tiny_step_label</text>"));
    HAS (svg, "<title>tiny_step_label");               /* still there on hover */
    HAS (svg, ">long_enough_\xc3\xa9t\xc3\xa9_");       /* cut, on a character */
    HAS (svg, "\u2026</text>");
    free (svg);
    report_run_free (&run);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("report");
    TCase *tc = tcase_create ("report");
    tcase_add_test (tc, test_parse_steps);
    tcase_add_test (tc, test_open_lease_ends_with_log);
    tcase_add_test (tc, test_parse_errors);
    tcase_add_test (tc, test_lanes);
    tcase_add_test (tc, test_lanes_reuse);
    tcase_add_test (tc, test_summary);
    tcase_add_test (tc, test_allocation);
    tcase_add_test (tc, test_svg);
    tcase_add_test (tc, test_svg_hides_what_does_not_fit);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
