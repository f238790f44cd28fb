"""A dam break through pbfcl, four of its frames plotted with matplotlib into a PNG.

    python3 dam_break_plot.py [OUT.png] [--particles N] [--device D]
"""
import argparse

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import pbfcl  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("out", nargs="?", default="dam-break.png")
parser.add_argument("--particles", type=int, default=10000)
parser.add_argument("--device", default=None)
args = parser.parse_args()

sim = pbfcl.Solver("dam-break", particles=args.particles, device=args.device)
lo, hi = np.array(sim.params.domain_min), np.array(sim.params.domain_max)
shown = (0, 20, 40, 80)
fig, axes = plt.subplots(1, len(shown), figsize=(4 * len(shown), 3.2), constrained_layout=True)
x = np.empty((sim.count, 3), np.float32)  # read into the same array each frame
for frame in range(shown[-1] + 1):
    if frame:
        sim.step()
    if frame in shown:
        ax = axes[shown.index(frame)]
        sim.get_positions(out=x)
        speed = np.linalg.norm(sim.velocities, axis=1)
        ax.scatter(x[:, 0], x[:, 1], c=speed, s=1, cmap="viridis", vmin=0, vmax=3)
        ax.set(xlim=(lo[0], hi[0]), ylim=(lo[1], hi[1]), aspect="equal",
               title=f"frame {frame}, t = {sim.time:.2f} s")
fig.suptitle(f"pbfcl dam break, {sim.count} particles on {sim.context.device_name}")
fig.savefig(args.out, dpi=100)
print(f"wrote {args.out}; final stats: {sim.stats()['density_error_avg']:.3f} % density error")
