/* SPDX-License-Identifier: MIT */
/* The timeline: time runs left to right; each node is a band of lanes (or,
 * with cores, of one row per core id). A step is a coloured bar on every
 * node it held, labelled when the label fits (the full text is its SVG
 * title, shown on hover); its wait is hatched before it; under each node's
 * lanes a strip shows the share of its cores held, so idle room is the
 * blank above that area. Steps of one family (label without its trailing
 * number) share a colour. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report_svg.h"
#include "text.h"
#include "wallclock.h"

#define WIDTH 1400.0
#define LEFT 160.0
#define RIGHT 30.0
#define LANE_H 16.0
#define STRIP_H 14.0
#define ROW_GAP 10.0
#define CHAR_W 6.1             /* average width of a 10 px sans-serif glyph */
#define TOP 96.0

static const char *const palette[] = {
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
    "#b07aa1", "#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#a0cbe8",
};
#define NPALETTE (sizeof (palette) / sizeof (palette[0]))

static const char *colour (const char *label)
{
    if (!label)
        return "#9aa5b1";
    size_t n = report_family_len (label);
    uint32_t h = 2166136261u;               /* FNV-1a of the family */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char) label[i]) * 16777619u;
    return palette[h % NPALETTE];
}

/* Dark text on light fills, white on dark ones. */
static const char *ink (const char *fill)
{
    unsigned r, g, b;
    if (sscanf (fill, "#%02x%02x%02x", &r, &g, &b) != 3)
        return "#111";
    return 0.299 * r + 0.587 * g + 0.114 * b < 140 ? "#fff" : "#111";
}

/* XML text: at most max bytes of s (never cutting a UTF-8 character). */
static void xml_text (FILE *f, const char *s, size_t max)
{
    size_t n = strlen (s);
    if (n > max) {
        n = max;
        while (n > 0 && ((unsigned char) s[n] & 0xC0) == 0x80)
            n--;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char) s[i];
        switch (c) {
        case '&': fputs ("&amp;", f); break;
        case '<': fputs ("&lt;", f); break;
        case '>': fputs ("&gt;", f); break;
        case '"': fputs ("&quot;", f); break;
        default:
            if (c >= 0x20 || c == '\t' || c == '\n')
                fputc (c, f);       /* XML 1.0 allows no other control characters */
        }
    }
}

struct frame {
    double t0, span, plot_w;
};

static double xat (const struct frame *fr, double t)
{
    return LEFT + (fr->span > 0 ? (t - fr->t0) / fr->span : 0) * fr->plot_w;
}

void report_summary_print (FILE *f, const struct report_run *run,
                           const struct report_summary *s)
{
    char d[32];
    fprintf (f, "steps %d on %d node%s, %lld cores", run->nsteps, run->nnodes,
             run->nnodes == 1 ? "" : "s", s->cores);
    if (run->refused)
        fprintf (f, " (%d refused)", run->refused);
    wallclock_format_brief (s->makespan, d, sizeof (d));
    fprintf (f, "\nmakespan %s (%.1f s)\n", d, s->makespan);
    fprintf (f, "mean utilisation %.1f%% (peak %d of %lld cores held)\n",
             100.0 * s->utilisation, s->peak_cores, s->cores);
    if (s->waited) {
        wallclock_format_brief (s->longest_wait, d, sizeof (d));
        fprintf (f, "longest wait %s (%.1f s, %s); %d step%s waited\n", d, s->longest_wait,
                 s->longest_wait_label ? s->longest_wait_label : "unlabelled",
                 s->waited, s->waited == 1 ? "" : "s");
    } else
        fprintf (f, "longest wait 0s (no step waited)\n");
}

static void bar_label (FILE *f, const struct report_step *st, double x, double y,
                       double w, double h, const char *fill)
{
    if (!st->label || h < 9)
        return;
    size_t fits = w > 6 ? (size_t) ((w - 4) / CHAR_W) : 0;
    size_t len = text_utf8_chars (st->label);
    if (fits >= len || fits >= 5) {
        fprintf (f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">", x + 2, y + h / 2 + 3.5, ink (fill));
        if (fits >= len)
            xml_text (f, st->label, strlen (st->label));
        else {                 /* cut, and say so */
            xml_text (f, st->label, text_utf8_prefix (st->label, fits - 1));
            fputs ("\u2026", f);
        }
        fputs ("</text>", f);
    }
}

static void step_title (FILE *f, const struct report_run *run, const struct report_step *st)
{
    char a[32], b[32], w[32];
    int cores = 0;
    for (int j = 0; j < st->nspans; j++)
        cores += st->spans[j].ncores;
    wallclock_format_brief (st->start - run->t0, a, sizeof (a));
    wallclock_format_brief (st->end - run->t0, b, sizeof (b));
    wallclock_format_brief (st->start - st->asked, w, sizeof (w));
    fputs ("<title>", f);
    xml_text (f, st->label ? st->label : "(no label)", 255);
    fprintf (f, " \u00b7 %s \u00b7 %d core%s on %d node%s", st->lease, cores,
             cores == 1 ? "" : "s", st->nspans, st->nspans == 1 ? "" : "s");
    if (st->gpus)
        fprintf (f, ", %d GPU%s", st->gpus, st->gpus == 1 ? "" : "s");
    fprintf (f, " \u00b7 %s to %s%s", a, b, st->released ? "" : " (still held)");
    if (st->start > st->asked)
        fprintf (f, " \u00b7 waited %s", w);
    fputs ("</title>", f);
}

/* One bar (and, by node, its wait: on a core's row the wait would cover
 * the step that held the core before) at a row. */
static void bar (FILE *f, const struct frame *fr, const struct report_step *st,
                 double y, double h, bool label, bool wait)
{
    const char *fill = colour (st->label);
    double xa = xat (fr, st->asked), xs = xat (fr, st->start), xe = xat (fr, st->end);
    if (wait && xs > xa)
        fprintf (f, "<rect class=\"wait\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
                 xa, y + 1, xs - xa, h - 2);
    double w = xe - xs < 1 ? 1 : xe - xs;
    fprintf (f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>",
             xs, y + 1, w, h - 2, fill);
    if (label)
        bar_label (f, st, xs, y, w, h, fill);
}

static double nice_tick (double span)
{
    static const double steps[] = { 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600,
                                    900, 1800, 3600, 7200, 10800, 21600, 43200, 86400 };
    for (size_t i = 0; i < sizeof (steps) / sizeof (steps[0]); i++)
        if (span / steps[i] <= 12)
            return steps[i];
    return 86400.0 * (double) ((long long) (span / 86400 / 12) + 1);   /* days, no libm */
}

static void axis (FILE *f, const struct frame *fr, double y0, double y1)
{
    double tick = nice_tick (fr->span);
    char d[32];
    for (double t = 0; t <= fr->span + 1e-9; t += tick) {
        double x = xat (fr, fr->t0 + t);
        if (tick < 1)
            snprintf (d, sizeof (d), "%.1fs", t);
        else
            wallclock_format_brief (t, d, sizeof (d));
        fprintf (f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                 "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                 x, y0, x, y1, x, y0 - 4, d);
    }
}

/* Share of the node's cores held over time, as a filled step curve. */
static void strip (FILE *f, const struct frame *fr, const struct report_run *run, int node,
                   double y)
{
    const struct report_node *n = &run->nodes[node];
    fprintf (f, "<rect class=\"strip\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
             LEFT, y, fr->plot_w, STRIP_H);
    if (n->ncores == 0)
        return;
    /* sweep over the times where this node's holding changes */
    double t = run->t0;
    int held = 0;
    fprintf (f, "<path class=\"held\" d=\"M%.1f %.1f", LEFT, y + STRIP_H);
    for (;;) {
        double next = INFINITY;
        for (int i = 0; i < run->nsteps; i++) {
            const struct report_step *st = &run->steps[i];
            for (int j = 0; j < st->nspans; j++) {
                if (st->spans[j].node != node)
                    continue;
                if (st->start > t && st->start < next)
                    next = st->start;
                if (st->end > t && st->end < next)
                    next = st->end;
            }
        }
        double h = STRIP_H * (held > n->ncores ? 1.0 : (double) held / n->ncores);
        double x = xat (fr, isfinite (next) ? next : run->t1);
        fprintf (f, " V%.1f H%.1f", y + STRIP_H - h, x);
        if (!isfinite (next))
            break;
        t = next;
        held = 0;
        for (int i = 0; i < run->nsteps; i++) {
            const struct report_step *st = &run->steps[i];
            for (int j = 0; j < st->nspans; j++)
                if (st->spans[j].node == node && st->start <= t && st->end > t)
                    held += st->spans[j].ncores;
        }
    }
    fprintf (f, " V%.1f Z\"/>\n", y + STRIP_H);
}

static void name_cell (FILE *f, const struct report_node *n, double y, double h, double x)
{
    fprintf (f, "<text class=\"node\" x=\"%.1f\" y=\"%.1f\">", x, y + h / 2);
    xml_text (f, n->name, 40);
    fprintf (f, "</text><text class=\"cores\" x=\"%.1f\" y=\"%.1f\">%d cores</text>\n",
             x, y + h / 2 + 13, n->ncores);
}

static double rows_by_node (FILE *f, const struct frame *fr, const struct report_run *run,
                            double y)
{
    for (int n = 0; n < run->nnodes; n++) {
        const struct report_node *node = &run->nodes[n];
        double h = node->nlanes * LANE_H;
        fprintf (f, "<g class=\"node-row\"><rect class=\"band\" x=\"%.1f\" y=\"%.1f\" "
                 "width=\"%.1f\" height=\"%.1f\"/>\n", LEFT, y, fr->plot_w, h);
        name_cell (f, node, y, h + STRIP_H, LEFT - 8);
        for (int i = 0; i < run->nsteps; i++) {
            const struct report_step *st = &run->steps[i];
            for (int j = 0; j < st->nspans; j++) {
                if (st->spans[j].node != n)
                    continue;
                fprintf (f, "<g class=\"step\">");
                step_title (f, run, st);
                bar (f, fr, st, y + st->spans[j].lane * LANE_H, LANE_H, true, true);
                fputs ("</g>\n", f);
            }
        }
        strip (f, fr, run, n, y + h);
        fputs ("</g>\n", f);
        y += h + STRIP_H + ROW_GAP;
    }
    return y;
}

static int index_of (const int *ids, int n, int id)
{
    for (int i = 0; i < n; i++)
        if (ids[i] == id)
            return i;
    return -1;
}

/* By core the waits have no row of their own: one band above the nodes
 * shows how many requests waited, over time. */
#define QUEUE_H 22.0
static double queue_band (FILE *f, const struct frame *fr, const struct report_run *run,
                          double y)
{
    struct report_change *ch = malloc ((size_t) (2 * run->nsteps + 1) * sizeof (*ch));
    int n = 0, now = 0, most = 0;
    for (int i = 0; ch && i < run->nsteps; i++)
        if (run->steps[i].start > run->steps[i].asked) {
            ch[n++] = (struct report_change) { run->steps[i].asked, 1 };
            ch[n++] = (struct report_change) { run->steps[i].start, -1 };
        }
    if (ch)
        qsort (ch, (size_t) n, sizeof (*ch), report_change_cmp);
    for (int i = 0; i < n; i++)
        if ((now += ch[i].delta) > most)
            most = now;
    fprintf (f, "<g class=\"queue-row\"><rect class=\"strip\" x=\"%.1f\" y=\"%.1f\" "
             "width=\"%.1f\" height=\"%.1f\"/>", LEFT, y, fr->plot_w, QUEUE_H);
    fprintf (f, "<text class=\"node\" x=\"%.1f\" y=\"%.1f\">waiting</text>"
             "<text class=\"cores\" x=\"%.1f\" y=\"%.1f\">at most %d</text>\n",
             LEFT - 8, y + 10, LEFT - 8, y + 21, most);
    if (most > 0) {
        fprintf (f, "<path class=\"queued\" d=\"M%.1f %.1f", LEFT, y + QUEUE_H);
        now = 0;
        for (int i = 0; i < n; i++) {
            fprintf (f, " H%.1f", xat (fr, ch[i].time));
            now += ch[i].delta;
            fprintf (f, " V%.1f", y + QUEUE_H - QUEUE_H * now / most);
        }
        fprintf (f, " H%.1f V%.1f Z\"/>", LEFT + fr->plot_w, y + QUEUE_H);
    }
    fputs ("</g>\n", f);
    free (ch);
    return y + QUEUE_H + ROW_GAP;
}

static double rows_by_core (FILE *f, const struct frame *fr, const struct report_run *run,
                            double y)
{
    y = queue_band (f, fr, run, y);
    long long total = 0;
    for (int n = 0; n < run->nnodes; n++)
        total += run->nodes[n].ncores;
    double rh = total <= 96 ? 14 : total <= 256 ? 8 : 4;
    for (int n = 0; n < run->nnodes; n++) {
        const struct report_node *node = &run->nodes[n];
        double h = node->ncores * rh;
        fprintf (f, "<g class=\"node-row\"><rect class=\"band\" x=\"%.1f\" y=\"%.1f\" "
                 "width=\"%.1f\" height=\"%.1f\"/>\n", LEFT, y, fr->plot_w, h);
        name_cell (f, node, y, h < 26 ? 26 : h, LEFT - 22);
        if (rh >= 8)
            for (int c = 0; c < node->ncores; c++)
                fprintf (f, "<text class=\"coreid\" x=\"%.1f\" y=\"%.1f\">%d</text>",
                         LEFT - 3, y + c * rh + rh / 2 + 2.5, node->cores[c]);
        for (int i = 0; i < run->nsteps; i++) {
            const struct report_step *st = &run->steps[i];
            for (int j = 0; j < st->nspans; j++) {
                const struct report_span *sp = &st->spans[j];
                if (sp->node != n)
                    continue;
                fprintf (f, "<g class=\"step\">");
                step_title (f, run, st);
                /* one bar per run of adjacent core rows; the label on the first */
                for (int k = 0; k < sp->ncores;) {
                    int row = index_of (node->cores, node->ncores, sp->cores[k]), len = 1;
                    while (k + len < sp->ncores
                           && index_of (node->cores, node->ncores, sp->cores[k + len]) == row + len)
                        len++;
                    if (row >= 0)
                        bar (f, fr, st, y + row * rh, len * rh, k == 0, false);
                    k += len;
                }
                fputs ("</g>\n", f);
            }
        }
        fputs ("</g>\n", f);
        y += (h < 26 ? 26 : h) + ROW_GAP;
    }
    return y;
}

static void legend (FILE *f, double y, bool cores)
{
    double x = LEFT;
    fprintf (f, "<g class=\"legend\">"
             "<rect x=\"%.1f\" y=\"%.1f\" width=\"28\" height=\"12\" fill=\"%s\"/>"
             "<text x=\"%.1f\" y=\"%.1f\">a step, labelled where its label fits "
             "(hover for all of it); one colour per label family</text>",
             x, y, palette[0], x + 34, y + 10);
    x += 480;
    fprintf (f, "<rect class=\"wait\" x=\"%.1f\" y=\"%.1f\" width=\"28\" height=\"12\"/>"
             "<text x=\"%.1f\" y=\"%.1f\">%s</text>",
             x, y, x + 34, y + 10, cores ? "requests waiting for room (the top band)"
                                         : "waiting for room (before its grant)");
    x += 260;
    if (cores) {
        fputs ("</g>\n", f);
        return;
    }
    fprintf (f, "<rect class=\"strip\" x=\"%.1f\" y=\"%.1f\" width=\"28\" height=\"12\"/>"
             "<path class=\"held\" d=\"M%.1f %.1f V%.1f H%.1f V%.1f Z\"/>"
             "<text x=\"%.1f\" y=\"%.1f\">share of the node's cores held; blank = idle</text>"
             "</g>\n", x, y, x, y + 12, y + 4, x + 16, y + 12, x + 34, y + 10);
}

static double height_of (const struct report_run *run, bool cores)
{
    double h = TOP + 60 + (cores ? QUEUE_H + ROW_GAP : 0);
    long long total = 0;
    for (int n = 0; n < run->nnodes; n++)
        total += run->nodes[n].ncores;
    double rh = total <= 96 ? 14 : total <= 256 ? 8 : 4;
    for (int n = 0; n < run->nnodes; n++) {
        if (cores) {
            double r = run->nodes[n].ncores * rh;
            h += (r < 26 ? 26 : r) + ROW_GAP;
        } else
            h += run->nodes[n].nlanes * LANE_H + STRIP_H + ROW_GAP;
    }
    return h;
}

void report_svg (FILE *f, const struct report_run *run, const struct report_summary *s,
                 const struct report_picture *o)
{
    struct frame fr = { run->t0, run->t1 - run->t0, WIDTH - LEFT - RIGHT };
    double height = height_of (run, o->cores);
    char mk[32], lw[32];
    wallclock_format_brief (s->makespan, mk, sizeof (mk));
    wallclock_format_brief (s->longest_wait, lw, sizeof (lw));
    fprintf (f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
             "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
             "font-size=\"10\">\n", WIDTH, height, WIDTH, height);
    fputs ("<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
           "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#f4f4f4\"/>"
           "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#9a9a9a\" stroke-width=\"2.5\"/>"
           "</pattern><style>"
           ".band{fill:#fafbfc;stroke:#d5dae0;stroke-width:0.5}"
           ".strip{fill:#ffffff;stroke:#c3c9d0;stroke-width:0.5}"
           ".held{fill:#8795a5}"
           ".wait{fill:url(#hatch);stroke:#9a9a9a;stroke-width:0.5}"
           ".step rect{stroke:#ffffff;stroke-width:0.6}"
           ".grid{stroke:#e3e6ea;stroke-width:1}"
           ".tick{fill:#555;text-anchor:middle}"
           ".node{fill:#222;font-size:12px;font-weight:bold;text-anchor:end}"
           ".cores{fill:#666;text-anchor:end}"
           ".coreid{fill:#888;font-size:7px;text-anchor:end}"
           ".queued{fill:url(#hatch);stroke:#9a9a9a;stroke-width:0.5}"
           ".title{font-size:16px;font-weight:bold;fill:#222}"
           ".figures{font-size:12px;fill:#333}"
           ".legend text{fill:#333}"
           "</style></defs>\n", f);
    fprintf (f, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", WIDTH, height);
    fputs ("<text class=\"title\" x=\"20\" y=\"26\">", f);
    xml_text (f, o->title ? o->title : "berth run", 200);
    fprintf (f, " \u2014 %d steps on %d node%s%s</text>\n", run->nsteps, run->nnodes,
             run->nnodes == 1 ? "" : "s", o->cores ? ", one row per core" : "");
    fprintf (f, "<text class=\"figures\" x=\"20\" y=\"48\">makespan %s \u00b7 mean utilisation "
             "%.1f%% of %lld cores (peak %d held) \u00b7 longest wait %s", mk,
             100.0 * s->utilisation, s->cores, s->peak_cores, lw);
    if (s->longest_wait_label) {
        fputs (" (", f);
        xml_text (f, s->longest_wait_label, 80);
        fputs (")", f);
    }
    fprintf (f, " \u00b7 %d waited \u00b7 %d refused</text>\n", s->waited, run->refused);
    axis (f, &fr, TOP - 14, height - 50);
    double y = o->cores ? rows_by_core (f, &fr, run, TOP) : rows_by_node (f, &fr, run, TOP);
    legend (f, y + 12, o->cores);
    fputs ("</svg>\n", f);
}

void report_html (FILE *f, const struct report_run *run, const struct report_summary *s,
                  const struct report_picture *o)
{
    fputs ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", f);
    xml_text (f, o->title ? o->title : "berth run", 200);
    fputs ("</title>\n<style>body{font-family:sans-serif;margin:1em}"
           "pre{background:#f6f8fa;padding:0.6em}</style></head><body>\n<h1>", f);
    xml_text (f, o->title ? o->title : "berth run", 200);
    fputs ("</h1>\n<pre>", f);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream (&buf, &len);
    if (m) {
        report_summary_print (m, run, s);
        fclose (m);
        if (buf)
            xml_text (f, buf, len);
        free (buf);
    }
    fputs ("</pre>\n<p>Hover over a bar for its step.</p>\n", f);
    report_svg (f, run, s, o);
    fputs ("</body></html>\n", f);
}
