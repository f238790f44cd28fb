"""A parameter sweep: the dam break's density error and kinetic energy after one second for
several solver iteration counts and viscosities, one solver per setting on one context.

    python3 param_sweep.py [--particles N] [--frames F] [--device D]
"""
import argparse
import itertools

import pbfcl

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--particles", type=int, default=5000)
parser.add_argument("--frames", type=int, default=60)
parser.add_argument("--device", default=None)
args = parser.parse_args()

ctx = pbfcl.Context(device=args.device)
print(f"# {ctx.device_name}, dam-break, {args.particles} particles, {args.frames} frames")
print(f"{'iterations':>10} {'viscosity':>9} {'density err %':>13} {'max err %':>9} "
      f"{'kinetic J':>9} {'ms/frame':>8}")
for iterations, viscosity in itertools.product((2, 4, 8), (0.0, 0.05, 0.2)):
    with pbfcl.Solver("dam-break", particles=args.particles, context=ctx,
                      params={"iterations": iterations, "viscosity": viscosity}) as sim:
        ms = 0.0
        for _ in range(args.frames):
            ms += sim.step(timed=True)["total"]
        s = sim.stats()
        print(f"{iterations:>10} {viscosity:>9} {s['density_error_avg']:>13.3f} "
              f"{s['density_error_max']:>9.2f} {s['kinetic_energy']:>9.3f} "
              f"{ms / args.frames:>8.2f}")
ctx.destroy()
