/* SPDX-License-Identifier: MIT */
/* The request options that berth acquire and berth run share (what a step
 * asks for), parsed into a libberth request. */
#ifndef BERTH_REQUEST_OPTIONS_H
#define BERTH_REQUEST_OPTIONS_H

#include <getopt.h>
#include <stdio.h>

#include "berth/berth.h"

enum {
    REQ_OPT_CORES = 2000, REQ_OPT_GPUS, REQ_OPT_MEMORY, REQ_OPT_MIN_TASKS,
    REQ_OPT_MIN_CPT, REQ_OPT_MIN_CORES, REQ_OPT_MIN_GPUS, REQ_OPT_MIN_MEMORY,
    REQ_OPT_SPAN, REQ_OPT_NO_SPAN, REQ_OPT_LABEL, REQ_OPT_PRIORITY,
    REQ_OPT_TIMEOUT, REQ_OPT_GPT, REQ_OPT_SOCKET, REQ_OPT_DURATION,
};

/* getopt_long entries; the short options are "n:c:" (REQUEST_SHORT). */
#define REQUEST_SHORT "n:c:"
#define REQUEST_OPTIONS \
    { "ntasks", required_argument, NULL, 'n' }, \
    { "cpus-per-task", required_argument, NULL, 'c' }, \
    { "cores", required_argument, NULL, REQ_OPT_CORES }, \
    { "gpus", required_argument, NULL, REQ_OPT_GPUS }, \
    { "memory", required_argument, NULL, REQ_OPT_MEMORY }, \
    { "min-tasks", required_argument, NULL, REQ_OPT_MIN_TASKS }, \
    { "min-cpus-per-task", required_argument, NULL, REQ_OPT_MIN_CPT }, \
    { "min-cores", required_argument, NULL, REQ_OPT_MIN_CORES }, \
    { "min-gpus", required_argument, NULL, REQ_OPT_MIN_GPUS }, \
    { "min-memory", required_argument, NULL, REQ_OPT_MIN_MEMORY }, \
    { "may-span-nodes", no_argument, NULL, REQ_OPT_SPAN }, \
    { "no-span", no_argument, NULL, REQ_OPT_NO_SPAN }, \
    { "label", required_argument, NULL, REQ_OPT_LABEL }, \
    { "priority", required_argument, NULL, REQ_OPT_PRIORITY }, \
    { "timeout", required_argument, NULL, REQ_OPT_TIMEOUT }, \
    { "duration", required_argument, NULL, REQ_OPT_DURATION }, \
    { "gpus-per-task", required_argument, NULL, REQ_OPT_GPT }, \
    { "socket", required_argument, NULL, REQ_OPT_SOCKET }

/* The help text of these options, for a command's usage. */
void request_options_help (FILE *f);

/* Take option c (with its argument) into r when it is a request option;
 * --socket goes to *socket. Returns 1 when taken, 0 when c is not one of
 * them, -1 (a message printed for cmd) when its value is wrong. */
int request_option (berth_request_t *r, const char **socket, int c,
                    const char *arg, const char *cmd);

/* 1 when --may-span-nodes was given for r, 0 for --no-span, -1 for neither
 * (giving both is refused as they come). */
int request_option_span (const berth_request_t *r);

/* Parse a memory size in MB: "8000", "8000M", "8G", "1T" (binary units). */
int request_parse_memory (const char *text, long long *mb);

#endif
