#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Each figure of a benchmark run against its target, with the anchors measured
beside it: a table on stdout, summary.md (for the README) and summary.json in
the results directory. Targets are read, never asserted: the exit status says
only whether the results could be read."""
import json
import os
import sys


def load(d, name):
    p = os.path.join(d, name + ".json")
    return json.load(open(p)) if os.path.exists(p) else None


def main():
    d = sys.argv[1]
    m = load(d, "machine") or {}
    rows = []  # (target, figure, anchor, met)

    def row(target, figure, anchor, met):
        rows.append({"target": target, "figure": figure, "anchor": anchor, "met": bool(met)})

    r = load(d, "ledger")
    if r:
        a = r["at_10000"]
        row("1. ledger, 10,000 nodes: 1-node 4-core acquire+release < 5 us",
            f"{a['one_node_us']:.2f} us", "", r["meets"]["one_node_under_5us"])
        row("1. ledger, 10,000 nodes: 64-node span acquire+release < 100 us",
            f"{a['span_64_us']:.1f} us", "", r["meets"]["span_under_100us"])
        row("1. ledger cost 100 -> 10,000 nodes: no worse than linear (x100)",
            f"x{a['growth_one_node']:.2f} (1 node), x{a['growth_span']:.2f} (span)", "",
            r["meets"]["linear"])
    def machine_speed(c):
        # the real-time witnesses of bench_socket: how often the CPUs ran 5x
        # slower, and how many of the slow operations ran then
        m = c.get("machine_speed")
        if not m or not m.get("witnessed") or not m.get("windows_5ms"):
            return ""
        slow = c.get("over_5ms", 0)
        share = f", and {m['slow_ops_on_slowed_cpus'] / slow:.0%} of the operations over 5 ms ran then" if slow else ""
        return (f"the CPUs themselves ran 5x slower or worse (up to {m['worst_slowdown']:.0f}x) "
                f"in {m['windows_slowed_5x'] / m['windows_5ms']:.1%} of 5 ms windows{share}; ")

    r = load(d, "socket")
    if r:
        o, c, h = r["one_client"], r["concurrent"], r["held"]
        row("2. one client over the socket: p50 < 50 us, p99 < 250 us",
            f"p50 {o['pair_p50_us']:.0f} us, p99 {o['pair_p99_us']:.0f} us",
            (f"two bare socket round trips p50 {o['socket_floor_p50_us']:.0f} us, "
             f"p99 {o['socket_floor_p99_us']:.0f} us; " if "socket_floor_p50_us" in o else "")
            + "Flux: ~400 us per local RPC", r["meets"]["rtt"])
        row("3. 64 clients: >= 100,000 ops/s, none over 5 ms",
            f"{c['ops_per_s']:,.0f} ops/s, slowest {c['slowest_ms']:.1f} ms "
            + (f"({c['over_5ms'] / c['ops_total']:.2%} over 5 ms, p99.9 "
               f"{c['p999_us'] / 1000:.1f} ms; " if c.get("ops_total") else "(")
            + f"berthd {c['berthd_cpu_us_per_op']:.1f} us CPU/op)",
            machine_speed(c) + "Flux: ~18,000 pipelined RPC/s", r["meets"]["throughput"])
        row("7. 4,000 clients holding leases, 100,000 grants behind: RSS < 64 MiB",
            f"{h['peak_rss_mib']:.1f} MiB peak ({h['clients']} clients, "
            f"{h['grants_behind']:,} grants)", "Flux broker: 15 -> 550 MiB over 3,000 jobs",
            r["meets"]["rss"] and r["meets"]["grants"])
    r = load(d, "startup")
    if r:
        big = [x for x in r["rows"] if x["nodes"] == 10000][0]
        row("7. start-up to ready, 10,000-node allocation: < 20 ms",
            f"{big['ready_ms']:.1f} ms", f"process start floor {r['version_floor_ms']:.1f} ms",
            r["meets"]["ready_under_20ms_at_10000"])
    r = load(d, "cli")
    if r:
        row("4. CLI: berth acquire + berth release < 3 ms per pair",
            f"{r['pair_ms']:.2f} ms", f"two bare process starts {r['two_process_starts_ms']:.2f} ms; "
            "Flux C CLI ~15 ms per call", r["meets"]["pair_under_3ms"])
        row("5. berth run --local, 2 at a time: >= 2x GNU parallel -j2",
            f"{r['ratio_vs_parallel']:.2f}x ({r['berth_run_steps_per_s']:.0f} steps/s)",
            f"parallel {r['parallel_steps_per_s']:.0f}/s, fork/exec loop "
            f"{r['fork_exec_loop_steps_per_s']:.0f}/s; flux run ~2/s", r["meets"]["twice_parallel"])
    r = load(d, "slurm")
    if r:
        # the headline (the first point, N=8 of 0.2 s by default), then each
        # further point of the sweep with its own verdict: met only where
        # berth is at least as fast as bare srun there, with no retries
        def slurm_row(p, label):
            b, e = p["bare"], p["berth"]
            fig = lambda x, u: "-" if x is None else f"{x:.1f}{u}"
            ratio = p.get("speedup_vs_bare_srun")
            row(f"6. Slurm, {p['steps']} one-core steps of {p['step_seconds']:g} s, "
                f"{p['at_once']} at once on {r['cpus']} CPUs{label}: as fast as srun --exact, no retries",
                f"{fig(e['wall_s'], ' s')}, {e['srun_retries']} retries"
                + (f" ({ratio:.2f}x)" if ratio else ""),
                f"parallel srun --exact {fig(b['wall_s'], ' s')}, {b['srun_retries']} retries"
                + (f"; load {b['load_start'][0]:.1f}" if b.get("load_start") else ""),
                p["meets"]["as_fast_as_srun"] and p["meets"]["zero_retries"])
        slurm_row(r, "")
        sweep = r.get("sweep", [])
        for p in sweep[1:]:
            slurm_row(p, " (sweep)")
        if len(sweep) > 1:
            ok = [f"{p['at_once']}x{p['step_seconds']:g}s" for p in sweep
                  if p["meets"]["as_fast_as_srun"] and p["meets"]["zero_retries"]]
            row(f"6. Slurm sweep ({len(sweep)} points, N x step): berth met the target at",
                ", ".join(ok) if ok else "no point", "", len(ok) == len(sweep))
    r = load(d, "pack")
    if r:
        row("8. packing 300 steps on 8 nodes: makespan <= 1.15 x bound, better than strict",
            f"{r['ratio']:.3f} x bound (durations stated, off by up to 1.25x)",
            f"up to 2x off {r['rough_estimates_ratio']:.3f}; none stated "
            f"{r['no_estimates_ratio']:.3f}; strict first fit {r['strict_ratio']:.3f}; "
            f"backfill without starvation bound {r['unbounded_ratio']:.3f}",
            r["meets"]["within_1_15"] and r["meets"]["better_than_strict"])

    for name, label in (("queue", "queue"), ("queue_16n_10k", "queue"), ("queue_10k", "queue"),
                        ("queue_16n_100k", "queue, pipelined"), ("queue_10kn_100k", "queue, pipelined")):
        r = load(d, name)
        if r:
            first, last = r["deciles"][0], r["deciles"][-1]
            grow = last["p50_us"] / max(first["p50_us"], 1e-9)
            row(f"9. {label}, {r['nodes']} nodes, {r['waiting']} waiting ({r['shape']}"
                + (f", {r['per_conn']} a connection" if r.get("per_conn", 1) > 1 else "") + "): "
                "a request's cost flat in the queue's length (last tenth <= 2 x first)",
                f"p50 to waited {first['p50_us']:.0f} -> {last['p50_us']:.0f} us, p99 "
                f"{first['p99_us']:.0f} -> {last['p99_us']:.0f} us, CPU "
                f"{first['cpu_us_per_request']:.0f} -> {last['cpu_us_per_request']:.0f} us",
                f"status {r['status_ms_full']:.1f} ms, first grant {r['first_grant_ms']:.2f} ms, "
                f"drain {r['drain_s']:.2f} s, RSS {r['rss_mib_full']:.0f} MiB"
                + (f", progress poll {r['poll_queue_only_us']:.0f} us (queue) / "
                   f"{r['poll_pid_us']:.0f} us (pid)" if "poll_pid_us" in r else ""), grow <= 2)

    head = (f"{m.get('cpu', '?')}, {m.get('cores', '?')} cores, Linux {m.get('kernel', '?')}, "
            f"load {m.get('load_before', [0])[0]:.2f} at start, {m.get('date', '')}, "
            f"commit {m.get('commit', '')}" + (" (quick run: the figures mean nothing)"
                                                 if m.get("quick") else ""))
    print("summary: " + head)
    w = max((len(x["target"]) for x in rows), default=10)
    for x in rows:
        print(f"  {'met ' if x['met'] else 'MISS'} {x['target']:<{w}}  {x['figure']}"
              + (f"   [{x['anchor']}]" if x["anchor"] else ""))
    with open(os.path.join(d, "summary.md"), "w") as f:
        f.write(f"Measured on {head}.\n\n")
        f.write("| target | berth | beside it, same run (or published) | |\n|---|---|---|---|\n")
        for x in rows:
            f.write(f"| {x['target']} | {x['figure']} | {x['anchor']} | "
                    f"{'met' if x['met'] else '**missed**'} |\n")
    json.dump({"machine": m, "rows": rows}, open(os.path.join(d, "summary.json"), "w"), indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
