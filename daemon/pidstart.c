/* SPDX-License-Identifier: MIT */
/* A process's start time from /proc (pidstart.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pidstart.h"

int pidstart_parse (const char *text, size_t len, uint64_t *start)
{
    /* "PID (COMM) STATE PPID ...": the fields after the last ')' */
    const char *p = NULL;
    for (size_t i = len; i > 0; i--)
        if (text[i - 1] == ')') {
            p = text + i;
            break;
        }
    if (!p)
        return -1;
    const char *end = text + len;
    /* field 3 (state) is the first after ')'; the start time is field 22 */
    for (int field = 3; field < 22; field++) {
        while (p < end && *p == ' ')
            p++;
        while (p < end && *p != ' ')
            p++;
    }
    while (p < end && *p == ' ')
        p++;
    if (p >= end || *p < '0' || *p > '9')
        return -1;
    uint64_t v = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t) (*p - '0');
    }
    if (p < end && *p != ' ' && *p != '\n')
        return -1;
    *start = v;
    return 0;
}

int boot_id_read (char *buf, size_t size)
{
    if (size < 37)
        return -1;
    buf[0] = '\0';
    int fd = open ("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char b[64];
    ssize_t n;
    do
        n = read (fd, b, sizeof (b) - 1);
    while (n < 0 && errno == EINTR);
    close (fd);
    if (n < 36)
        return -1;
    memcpy (buf, b, 36);
    buf[36] = '\0';
    return 0;
}

int pidstart_read (pid_t pid, uint64_t *start)
{
    char path[64], buf[1024];
    snprintf (path, sizeof (path), "/proc/%d/stat", (int) pid);
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n;
    do
        n = read (fd, buf, sizeof (buf) - 1);
    while (n < 0 && errno == EINTR);
    int saved = errno;
    close (fd);
    if (n < 0) {
        errno = saved;
        return -1;
    }
    if (n == 0 || pidstart_parse (buf, (size_t) n, start) < 0) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}
