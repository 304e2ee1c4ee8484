#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""normkit benchmark report: runs normkit_bench and turns its JSON into a table and a plot.

  report.py run --bench build/bench/bench/normkit_bench [--quick] [--out-dir DIR] [--work-dir DIR]
  report.py report RESULTS.json[.xz] [--out-dir DIR] [--slug NAME] [--no-plot] [--strict]

`run` pins the benchmark to one CPU (taskset -c 1 when there is a CPU 1), runs it with
repetitions and writes the raw JSON, then does what `report` does: for every case it takes the
median over the repetitions (CPU time; wall time for the threads:N cases), computes GB/s from the
`bytes` counter, % of the copy roof (the fastest copy of the same bytes in the same run, any dtype,
memcpy or streaming, same thread count), % of the two-pass pattern (read a row, read it again while
writing it; the faster of streamed and plain, same bytes and threads), and the speed-up over the
naive loop and the Eigen expression of the same op, preset, dtype and shape; it writes <out-dir>/<cpu-slug>.md, .json.xz (raw benchmark output, xz-compressed:
~5 % of the size, so the repository and a shallow clone stay small) and .png, and prints
the table. Quick mode (--quick or NORMKIT_BENCH_QUICK=1) runs only the llama preset with fewer
repetitions and writes to <work-dir>/results-quick instead of <out-dir>.

Python 3 standard library only; the plot needs matplotlib (Debian: apt-get install
python3-matplotlib) and is skipped with a message when it is missing.
"""
import argparse
import datetime
import json
import lzma
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time

OPS = ["RmsNorm", "LayerNorm"]
PRESETS = ["llama", "gemma", "pytorch"]
DTYPES = ["f32", "bf16", "bf16-f32-bf16", "f16"]
SHAPES = [(1, 4096), (64, 4096), (4096, 4096), (16384, 128), (256, 16384), (32, 5120)]
PATHS = ["scalar", "avx2", "avx512", "avx512bf16", "avx512fp16", "neon", "naive", "eigen"]
NORMKIT_SIMD = ["avx512fp16", "avx512bf16", "avx512", "avx2", "neon"]  # best first: the path a user of the library gets
COPIES = ["memcpy", "stream"]
PATTERNS = ("Copy", "TwoPass")  # the roofs: no op, no preset

QUICK_FILTER = "^(Copy|RmsNorm/llama|LayerNorm/llama)/"
FULL = {"repetitions": 5, "min_time": 0.1}
QUICK = {"repetitions": 3, "min_time": 0.05}

NAME_RE = re.compile(
    r"^(?P<op>[^/]+)/(?:(?P<preset>[^/]+)/)?(?P<dtype>[^/]+)/rows:(?P<rows>\d+)/cols:(?P<cols>\d+)"
    r"(?:/threads:(?P<threads>\d+))?(?:/nt:(?P<nt>on|off))?/isa:(?P<path>\w+)(?:/real_time)?$")
TIME_UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def order(seq, value):
    return seq.index(value) if value in seq else len(seq)


# ---------------------------------------------------------------------------------------------
# Reading the benchmark JSON


def load_cases(raw):
    """One record per benchmark case: median CPU time over its repetitions, GB/s, residency."""
    samples, medians, errors = {}, {}, []
    for b in raw.get("benchmarks", []):
        name = b.get("run_name", b["name"])
        if b.get("error_occurred"):
            errors.append(f"{name}: {b.get('error_message', 'error')}")
            continue
        kind = b.get("run_type", "iteration")
        if kind == "iteration":
            samples.setdefault(name, []).append(b)
        elif b.get("aggregate_name") == "median":
            medians[name] = b
    cases = {}
    for name in list(samples) + [n for n in medians if n not in samples]:
        m = NAME_RE.match(name)
        if not m:
            continue
        runs = samples.get(name) or [medians[name]]
        threads = int(m["threads"] or 1)
        # Several threads: the wall time (the calling thread's CPU time misses the others' work).
        clock = "real_time" if threads > 1 else "cpu_time"
        secs = [r[clock] * TIME_UNIT[r.get("time_unit", "ns")] for r in runs]
        t = statistics.median(secs)
        first = runs[0]
        bytes_ = float(first.get("bytes", 0.0))
        rows, cols = int(m["rows"]), int(m["cols"])
        cases[name] = {
            "name": name,
            "op": m["op"],
            "preset": m["preset"],
            "dtype": m["dtype"],
            "rows": rows,
            "cols": cols,
            "path": m["path"],
            "threads": threads,
            "nt": m["nt"],
            "bytes": bytes_,
            "seconds": t,
            "reps": len(secs),
            "cv": (statistics.pstdev(secs) / statistics.mean(secs)) if len(secs) > 1 else 0.0,
            "gbps": bytes_ / t / 1e9 if t > 0 else 0.0,
            "ns_row": t / rows * 1e9,
            "mem": "DRAM" if float(first.get("dram", 0)) > 0 else "cache",
        }
    return cases, errors


def analyse(cases):
    # Per (dtype, rows, cols, threads): the pattern cases' GB/s ({"memcpy", "stream"} for Copy,
    # {"stream", "plain"} for TwoPass), and the roofs, which are the best of the run over the same
    # bytes and thread count: a copy of bf16 and one of f16 at the same shape move the same bytes,
    # and one dtype's slow minute must not lower the other's roof.
    roofs, best = {}, {}
    for c in cases.values():
        if c["op"] in PATTERNS:
            r = roofs.setdefault((c["dtype"], c["rows"], c["cols"], c["threads"]), {"mem": c["mem"], "bytes": c["bytes"]})
            r[(c["op"], c["path"])] = c["gbps"]
            k = (c["op"], c["bytes"], c["threads"])
            best[k] = max(best.get(k, 0.0), c["gbps"])
    for (dtype, r, cols, threads), v in roofs.items():
        v["roof"] = best.get(("Copy", v["bytes"], threads))
        v["two_pass"] = best.get(("TwoPass", v["bytes"], threads))
    by_case = {}
    for c in cases.values():
        if c["op"] not in PATTERNS:
            by_case[(c["op"], c["preset"], c["dtype"], c["rows"], c["cols"], c["threads"], c["nt"], c["path"])] = c
    rows = []
    for key, c in by_case.items():
        op, preset, dtype, r, cols, threads, nt, path = key
        # The copy's bytes: the kernel's count adds the gain vectors, which stay in cache.
        ref = roofs.get((dtype, r, cols, threads), {})
        roof, two = ref.get("roof"), ref.get("two_pass")
        naive = by_case.get((op, preset, dtype, r, cols, threads, nt, "naive"))
        eigen = by_case.get((op, preset, dtype, r, cols, threads, nt, "eigen"))
        rows.append(dict(c,
                         pct_roof=100.0 * c["gbps"] / roof if roof else None,
                         pct_two_pass=100.0 * c["gbps"] / two if two else None,
                         x_naive=naive["seconds"] / c["seconds"] if naive else None,
                         x_eigen=eigen["seconds"] / c["seconds"] if eigen else None))
    shape_index = {s: i for i, s in enumerate(SHAPES)}
    rows.sort(key=lambda c: (order(OPS, c["op"]), c["op"], order(PRESETS, c["preset"]), c["preset"],
                             order(DTYPES, c["dtype"]), c["dtype"],
                             shape_index.get((c["rows"], c["cols"]), len(SHAPES)), c["rows"], c["cols"],
                             c["threads"], c["nt"] or "", order(PATHS, c["path"]), c["path"]))
    return roofs, rows


def best_simd(rows):
    """Per (op, preset, dtype, shape): the row of the best normkit SIMD path that ran."""
    best = {}
    for c in rows:
        if c["path"] not in NORMKIT_SIMD or c["threads"] != 1 or c["nt"]:
            continue
        key = (c["op"], c["preset"], c["dtype"], c["rows"], c["cols"])
        if key not in best or order(NORMKIT_SIMD, c["path"]) < order(NORMKIT_SIMD, best[key]["path"]):
            best[key] = c
    return best


# The targets of issue 4, checked on the best SIMD path per case (single thread, same-run roof).
TARGETS = [
    ("4096x4096 f32/bf16: % of copy roof", "pct_roof", 90.0, 95.0,
     lambda c: (c["rows"], c["cols"]) == (4096, 4096) and c["dtype"] in ("f32", "bf16")),
    ("1x4096 and 64x4096 (cache): % of copy roof", "pct_roof", 70.0, 80.0,
     lambda c: (c["rows"], c["cols"]) in ((1, 4096), (64, 4096))),
    ("16384x128 (per-row overhead): % of copy roof", "pct_roof", 60.0, None,
     lambda c: (c["rows"], c["cols"]) == (16384, 128)),
    ("bf16 in/out, every shape: x naive", "x_naive", 3.0, None, lambda c: c["dtype"].startswith("bf16")),
    ("bf16 in/out, every shape: x Eigen", "x_eigen", 1.0, None, lambda c: c["dtype"].startswith("bf16")),
]


# The targets of issue 19: two threads (normkit's thread-pool overloads, registered on the best
# SIMD path only) against the two-thread copy, and the DRAM cases against the two-pass pattern.
TARGETS_19 = [
    ("2 threads, 4096x4096: % of 2-thread copy roof", "pct_roof", 85.0, None,
     lambda c: c["threads"] == 2 and (c["rows"], c["cols"]) == (4096, 4096)),
    ("DRAM cases: % of the two-pass pattern", "pct_two_pass", 90.0, None, lambda c: c["mem"] == "DRAM"),
]


def check_targets(rows):
    best = list(best_simd(rows).values())
    threaded = [c for c in rows if c["path"] in NORMKIT_SIMD and c["threads"] > 1 and not c["nt"]]
    out = []
    for (label, field, need, goal, pred), pool in ([(t, best) for t in TARGETS] +
                                                    [(TARGETS_19[0], threaded), (TARGETS_19[1], best)]):
        scope = [c for c in pool if pred(c) and c[field] is not None]
        if not scope:
            out.append((label, need, goal, None, None, 0, 0))
            continue
        worst = min(scope, key=lambda c: c[field])
        misses = sum(1 for c in scope if c[field] < need)
        out.append((label, need, goal, worst, field, misses, len(scope)))
    return out


# ---------------------------------------------------------------------------------------------
# Output


def fmt(v, spec, none="–"):
    return none if v is None else format(v, spec)


def shape_str(c):
    return f"{c['rows']}x{c['cols']}"


def slugify(text):
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s or "unknown-cpu"


def default_slug(ctx):
    isas = [i for i in ctx.get("normkit_isas", "").split() if i != "scalar"]
    return slugify(ctx.get("cpu_model", "unknown")) + ("-" + isas[-1] if isas else "")


def markdown(raw, roofs, rows, targets, errors, slug, png_name):
    ctx = raw.get("context", {})
    run = raw.get("normkit_run", {})
    reps = sorted({c["reps"] for c in rows}) or [0]
    llc = int(ctx.get("llc_bytes", "0") or 0)
    out = [f"# normkit benchmarks: {ctx.get('cpu_model', 'unknown CPU')} (`{slug}`)", ""]
    out.append(f"- **Machine**: {ctx.get('cpu_model', '?')}, {ctx.get('num_cpus', '?')} CPUs at "
               f"{ctx.get('mhz_per_cpu', '?')} MHz, LLC {llc >> 20} MiB; host `{ctx.get('host_name', '?')}`")
    out.append(f"- **normkit** {ctx.get('normkit_version', '?')}; ISA paths run: "
               f"{ctx.get('normkit_isas', '?')}; not available here: {ctx.get('normkit_isas_skipped') or 'none'}")
    out.append(f"- **Compiler**: {ctx.get('compiler', '?')}; normkit flags `{ctx.get('cxx_flags', '?').strip()}` "
               f"(+ per-ISA TUs); baselines `{ctx.get('baseline_flags', '?')}`")
    out.append(f"- **Date**: {ctx.get('date', '?')}; library build type of Google Benchmark: "
               f"{ctx.get('library_build_type', '?')}")
    if run:
        out.append(f"- **Command**: `{run.get('made_by', 'bench/report.py run')}` ran "
                   f"`{run.get('command', '?')}` ({run.get('wall_seconds', 0):.0f} s wall, "
                   f"{run.get('cpu_seconds', 0):.0f} s CPU"
                   f"{', quick mode' if run.get('quick') else ''})")
    out.append(f"- **Method**: one thread{', pinned to CPU ' + str(run['cpu']) if run.get('cpu') is not None else ''}"
               f"; median CPU time of {'/'.join(map(str, reps))} repetitions; GB/s = bytes / time with bytes = "
               "rows·cols·(sizeof In + sizeof Out) + cols·sizeof W per gain vector (γ; LayerNorm also β). "
               "% roof = GB/s over the fastest copy of the same bytes in this run (any dtype, memcpy or a "
               "non-temporal copy, same thread count); % 2-pass = GB/s over the two-pass pattern (read a "
               "row, read it again while writing it, no arithmetic; streamed or plain, the faster), the "
               "contract's access pattern on this machine. × naive / × Eigen = time of that baseline / "
               "time of this path, same op, preset, dtype, shape. `mem` = DRAM for 4096x4096 and when one "
               "buffer set (x + y) exceeds half the LLC (such cases rotate over sets covering max(2× the "
               "LLC, 1 GiB)), cache otherwise. `threads:2` cases: normkit's thread-pool overloads on a "
               "2-thread pool, wall time; `nt:on/off`: streaming stores forced (set_stream_min_bytes) "
               f"instead of the machine's threshold ({int(ctx.get('stream_min_bytes', '0') or 0) >> 20} MiB here).")
    if errors:
        out.append(f"- **Errors**: {len(errors)} case(s) reported an error: " + "; ".join(errors[:5]))
    out.append("")
    if png_name:
        out += [f"![GB/s per shape and path]({png_name})", ""]

    out += ["## Targets (best normkit SIMD path per case)", "",
            "| target | need | goal | worst case | value | misses |", "|---|---|---|---|---|---|"]
    for label, need, goal, worst, field, misses, n in targets:
        if worst is None:
            out.append(f"| {label} | {need:g} | {fmt(goal, 'g')} | not measured | – | – |")
            continue
        name = f"{worst['op']}/{worst['preset']}/{worst['dtype']}/{shape_str(worst)}/{worst['path']}"
        verdict = "met" if misses == 0 else f"**{misses} of {n} below**"
        out.append(f"| {label} | {need:g} | {fmt(goal, 'g')} | `{name}` | {worst[field]:.2f} | {verdict} |")
    out.append("")

    out += ["## Copy roof and two-pass pattern (GB/s)", "",
            "| dtype | shape | threads | mem | memcpy | stream | roof | two-pass stream | two-pass plain | two-pass |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for (dtype, r, c, t), v in sorted(roofs.items(), key=lambda kv: (order(DTYPES, kv[0][0]),
                                                                    order(SHAPES, (kv[0][1], kv[0][2])), kv[0][3])):
        out.append(f"| {dtype} | {r}x{c} | {t} | {v['mem']} | {fmt(v.get(('Copy', 'memcpy')), '.1f')} | "
                   f"{fmt(v.get(('Copy', 'stream')), '.1f')} | {fmt(v.get('roof'), '.1f')} | "
                   f"{fmt(v.get(('TwoPass', 'stream')), '.1f')} | {fmt(v.get(('TwoPass', 'plain')), '.1f')} | "
                   f"{fmt(v.get('two_pass'), '.1f')} |")
    out.append("")

    out += ["## Kernels", "",
            "| op | preset | dtype | shape | mem | path | GB/s | % roof | % 2-pass | × naive | × Eigen | ns/row | cv |",
            "|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for c in rows:
        variant = (f" threads:{c['threads']}" if c["threads"] > 1 else "") + (f" nt:{c['nt']}" if c["nt"] else "")
        out.append(f"| {c['op']} | {c['preset']} | {c['dtype']} | {shape_str(c)} | {c['mem']} | {c['path']}{variant} | "
                   f"{c['gbps']:.1f} | {fmt(c['pct_roof'], '.0f')} | {fmt(c['pct_two_pass'], '.0f')} | "
                   f"{fmt(c['x_naive'], '.2f')} | "
                   f"{fmt(c['x_eigen'], '.2f')} | {c['ns_row']:.1f} | {100 * c['cv']:.0f}% |")
    out.append("")
    return "\n".join(out)


def plot(rows, roofs, path_png, title, preset):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"report.py: matplotlib is not available to {sys.executable}: no plot written "
              "(Debian: apt-get install python3-matplotlib, then rerun with /usr/bin/python3)")
        return False
    sel = [c for c in rows if c["preset"] == preset and c["threads"] == 1 and not c["nt"]]
    if not sel:
        print(f"report.py: no '{preset}' cases to plot")
        return False
    dtypes = [d for d in DTYPES if any(c["dtype"] == d for c in sel)]
    dtypes += sorted({c["dtype"] for c in sel} - set(dtypes))
    ops = [o for o in OPS if any(c["op"] == o for c in sel)]
    shapes = [s for s in SHAPES if any((c["rows"], c["cols"]) == s for c in sel)]
    fig, axes = plt.subplots(len(ops), len(dtypes), figsize=(4.2 * len(dtypes), 3.6 * len(ops)),
                             squeeze=False, sharey=True)
    styles = {"scalar": ("tab:gray", "o"), "avx2": ("tab:blue", "s"), "avx512": ("tab:purple", "D"),
              "avx512bf16": ("tab:brown", "P"), "avx512fp16": ("tab:pink", "*"), "neon": ("tab:green", "^"), "naive": ("tab:orange", "v"), "eigen": ("tab:red", "x")}
    xs = list(range(len(shapes)))
    for i, op in enumerate(ops):
        for j, dtype in enumerate(dtypes):
            ax = axes[i][j]
            roof = [roofs.get((dtype, r, c, 1), {}).get("roof") for r, c in shapes]
            ax.plot(xs, [v if v else float("nan") for v in roof], "k--", marker="_", ms=14, lw=1.5, label="copy roof")
            for p in PATHS:
                ys = []
                for r, c in shapes:
                    hit = [x for x in sel if x["op"] == op and x["dtype"] == dtype and x["path"] == p
                           and (x["rows"], x["cols"]) == (r, c)]
                    ys.append(hit[0]["gbps"] if hit else float("nan"))
                if all(y != y for y in ys):
                    continue
                color, marker = styles.get(p, ("black", "."))
                ax.plot(xs, ys, marker=marker, color=color, lw=1, label=p)
            ax.set_yscale("log")
            ax.set_xticks(xs)
            ax.set_xticklabels([f"{r}x{c}" for r, c in shapes], rotation=35, ha="right", fontsize=8)
            ax.set_title(f"{op} {dtype}", fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
            if j == 0:
                ax.set_ylabel("GB/s (log)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(labels), fontsize=9, frameon=False)
    fig.suptitle(title, y=0.02, fontsize=9)
    fig.tight_layout(rect=(0, 0.04, 1, 0.94))
    fig.savefig(path_png, dpi=110)
    plt.close(fig)
    return True


def load_raw(path):
    """Google Benchmark JSON, plain or xz-compressed (the committed results are .json.xz)."""
    with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:
        return json.load(f)


def make_report(raw_path, out_dir, slug=None, want_plot=True, plot_preset="llama", strict=False):
    raw = load_raw(raw_path)
    cases, errors = load_cases(raw)
    if not cases:
        print(f"report.py: no benchmark cases in {raw_path}", file=sys.stderr)
        return 1
    roofs, rows = analyse(cases)
    targets = check_targets(rows)
    slug = slug or default_slug(raw.get("context", {}))
    os.makedirs(out_dir, exist_ok=True)
    md_path = os.path.join(out_dir, slug + ".md")
    json_path = os.path.join(out_dir, slug + ".json.xz")
    png_path = os.path.join(out_dir, slug + ".png")
    if os.path.abspath(raw_path) != os.path.abspath(json_path):
        if raw_path.endswith(".xz"):
            shutil.copyfile(raw_path, json_path)
        else:
            with open(raw_path, "rb") as src, lzma.open(json_path, "wb", preset=9 | lzma.PRESET_EXTREME) as dst:
                shutil.copyfileobj(src, dst)
    ctx = raw.get("context", {})
    plotted = False
    if want_plot:
        plotted = plot(rows, roofs, png_path,
                       f"normkit on {ctx.get('cpu_model', '?')}: GB/s per shape, preset {plot_preset}, "
                       f"median CPU time; dashed = copy roof (same run)", plot_preset)
    text = markdown(raw, roofs, rows, targets, errors, slug, os.path.basename(png_path) if plotted else None)
    with open(md_path, "w") as f:
        f.write(text)
    print(text)
    print(f"report.py: wrote {md_path}, {json_path}" + (f", {png_path}" if plotted else " (no plot)"))
    if errors:
        print(f"report.py: {len(errors)} case(s) reported errors:", *errors[:10], sep="\n  ", file=sys.stderr)
        if strict:
            return 1
    return 0


# ---------------------------------------------------------------------------------------------
# Running the benchmark


def pick_cpu(request):
    """The CPU to pin to: NORMKIT_BENCH_CPU / --cpu, else 1 when allowed (taskset -c 1), else none."""
    if request in ("none", "off", ""):
        return None
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if request is not None:
        return int(request)
    if len(allowed) < 2:
        return None
    return 1 if 1 in allowed else allowed[-1]


def cmd_run(a):
    quick = a.quick or os.environ.get("NORMKIT_BENCH_QUICK", "") not in ("", "0")
    mode = QUICK if quick else FULL
    reps = a.repetitions or mode["repetitions"]
    min_time = a.min_time or mode["min_time"]
    bench_filter = a.filter or (QUICK_FILTER if quick else None)
    os.makedirs(a.work_dir, exist_ok=True)
    raw_path = os.path.join(a.work_dir, "normkit_bench-quick.json" if quick else "normkit_bench.json")
    log_path = raw_path[:-5] + ".log"
    cmd = [a.bench, f"--benchmark_out={raw_path}", "--benchmark_out_format=json",
           f"--benchmark_repetitions={reps}", f"--benchmark_min_time={min_time}",
           "--benchmark_display_aggregates_only=true"]
    if bench_filter:
        cmd.append(f"--benchmark_filter={bench_filter}")
    cpu = pick_cpu(a.cpu if a.cpu is not None else os.environ.get("NORMKIT_BENCH_CPU"))
    preexec = None
    if cpu is not None:
        if shutil.which("taskset"):
            cmd = ["taskset", "-c", str(cpu)] + cmd
        else:
            preexec = lambda: os.sched_setaffinity(0, {cpu})  # noqa: E731
    print(f"report.py: {'quick' if quick else 'full'} run, {reps} repetitions x {min_time} s per case"
          f"{', pinned to CPU ' + str(cpu) if cpu is not None else ', not pinned'}; console log {log_path}")
    print("report.py: " + shlex.join(cmd), flush=True)
    t0 = time.monotonic()
    with open(log_path, "w") as log, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                                      text=True, preexec_fn=preexec) as proc:
        for line in proc.stdout:
            log.write(line)
            # Show one line per case (its median), not the mean/stddev/cv aggregates.
            if not re.search(r"_(mean|stddev|cv) ", line):
                sys.stdout.write(line)
                sys.stdout.flush()
    wall = time.monotonic() - t0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_seconds = usage.ru_utime + usage.ru_stime
    if proc.returncode != 0:
        print(f"report.py: normkit_bench failed with exit code {proc.returncode}", file=sys.stderr)
        return proc.returncode
    print(f"report.py: benchmark finished in {wall:.0f} s wall, {cpu_seconds:.0f} s CPU "
          "(wall ~ CPU on an idle machine)", flush=True)
    with open(raw_path) as f:
        raw = json.load(f)
    raw["normkit_run"] = {"command": shlex.join(cmd), "made_by": a.made_by, "quick": quick,
                          "repetitions": reps, "min_time": min_time, "filter": bench_filter, "cpu": cpu,
                          "wall_seconds": wall, "cpu_seconds": cpu_seconds, "finished": datetime.datetime.now().isoformat(timespec="seconds")}
    with open(raw_path, "w") as f:
        json.dump(raw, f, indent=1)
    out_dir = os.path.join(a.work_dir, "results-quick") if quick else a.out_dir
    return make_report(raw_path, out_dir, a.slug, not a.no_plot, a.plot_preset, a.strict)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    here = os.path.dirname(os.path.abspath(__file__))

    def common(p):
        p.add_argument("--slug", help="output file stem (default: CPU model + best ISA, e.g. amd-epyc-avx2)")
        p.add_argument("--no-plot", action="store_true", help="skip the PNG")
        p.add_argument("--plot-preset", default="llama", help="preset plotted (default llama)")
        p.add_argument("--strict", action="store_true", help="exit 1 when a case reported an error")

    r = sub.add_parser("run", help="run normkit_bench, then report")
    r.add_argument("--bench", required=True, help="path of the normkit_bench executable")
    r.add_argument("--out-dir", default=os.path.join(here, "results"), help="where full results go")
    r.add_argument("--work-dir", default=".", help="raw output, console log and quick results")
    r.add_argument("--quick", action="store_true", help="llama only, 3 repetitions (also NORMKIT_BENCH_QUICK=1)")
    r.add_argument("--repetitions", type=int)
    r.add_argument("--min-time", type=float, help="seconds per repetition (Benchmark 1.7.1: plain seconds)")
    r.add_argument("--filter", help="--benchmark_filter regex")
    r.add_argument("--cpu", help="CPU to pin to, or 'none' (also NORMKIT_BENCH_CPU); default 1")
    r.add_argument("--made-by", default="bench/report.py run", help="the user-level command, for the report")
    common(r)

    p = sub.add_parser("report", help="report on an existing --benchmark_out JSON file")
    p.add_argument("json")
    p.add_argument("--out-dir", default=os.path.join(here, "results"))
    common(p)

    a = ap.parse_args(argv)
    if a.cmd == "run":
        return cmd_run(a)
    return make_report(a.json, a.out_dir, a.slug, not a.no_plot, a.plot_preset, a.strict)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
