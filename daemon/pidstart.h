/* SPDX-License-Identifier: MIT */
/* Who a pid is: a process's start time (field 22 of /proc/PID/stat, clock
 * ticks since boot) tells it apart from a later process given the same pid.
 * The journal records it beside a lease holder's pid, so that after a
 * restart berthd watches the holder only if the process under that pid is
 * still the one that held the lease. */
#ifndef BERTHD_PIDSTART_H
#define BERTHD_PIDSTART_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The start time in the text of a /proc/PID/stat (len bytes; the command
 * name in parentheses may hold spaces and parentheses itself). 0, or -1
 * when the text is not one. */
int pidstart_parse (const char *text, size_t len, uint64_t *start);

/* pid's start time from /proc. 0; -1 with errno ENOENT when there is no
 * such process in this /proc (gone, another pid namespace's, or no /proc
 * mounted), another errno when it cannot be read. */
int pidstart_read (pid_t pid, uint64_t *start);

/* This boot's id (/proc/sys/kernel/random/boot_id, 36 characters) into buf
 * (at least 37 bytes): the clock ticks of start times and CLOCK_BOOTTIME
 * instants mean something only within the boot they were read in. 0; -1
 * when it cannot be read (buf then holds ""). */
int boot_id_read (char *buf, size_t size);

#endif
