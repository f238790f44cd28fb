"""A SoftGym-style pouring environment on pbfcl: a held cup of water, moved and tilted by the
action, pours into a target cup on the floor. reset() -> observation; step(action) ->
(observation, reward, done, info). The cups are static particles (phase -1) that the
environment moves each frame by writing their positions (Solver.set_positions): the API has
no velocity for a moved static particle, so the cup pushes the water by contact only.

The observation is a (64, 64) float32 image of the water's side view (particles per pixel,
x across, y up), made from the positions; the reward is the share of the water inside the
target cup.

    python3 pouring_env.py [--steps N] [--device D]     a scripted pour, printing the reward
"""
import argparse

import numpy as np

import pbfcl

R = 0.01                 # particle radius, m
S = 2 * R                # the lattice spacing


def cup(inner, height):
    """Static particles of an open square cup (floor and four walls) around (0, 0, 0), the
    floor at y = 0: an (N, 3) array in the cup's own frame."""
    n = int(round(inner / S)) + 2
    side = (np.arange(n) - (n - 1) / 2) * S
    pts = []
    for i, x in enumerate(side):
        for k, z in enumerate(side):
            wall = i in (0, n - 1) or k in (0, n - 1)
            for j in range(int(height / S) + 1 if wall else 1):
                pts.append((x, j * S, z))
    return np.array(pts, np.float32)


def water(inner, height):
    """Fluid particles filling a cup of that inner size up to height, in the cup's frame."""
    m = int(round(inner / S)) - 1
    side = (np.arange(m) - (m - 1) / 2) * S
    ys = np.arange(1, int(height / S)) * S
    return np.array([(x, y, z) for x in side for y in ys for z in side], np.float32)


class PourEnv:
    """reset() / step(action): action = (dx, dy, dtilt) per frame, clipped to 1 cm and 0.05 rad."""

    box = ((0.0, 0.0, 0.0), (1.0, 0.8, 0.3))

    def __init__(self, device=None, frames=200):
        self.context = pbfcl.Context(device=device)
        self.frames = frames
        self.held_shape = cup(0.12, 0.16)
        self.target_shape = cup(0.16, 0.12)
        self.sim = None

    def reset(self):
        if self.sim:
            self.sim.destroy()
        held = water(0.12, 0.12)
        self.pivot = np.array([0.3, 0.35, 0.15], np.float32)
        self.target_at = np.array([0.62, 0.02, 0.15], np.float32)
        self.tilt, self.frame = 0.0, 0
        parts = [held + self.pivot, self.held_shape + self.pivot, self.target_shape + self.target_at]
        x = np.concatenate(parts)
        self.n_water, self.n_held = len(held), len(self.held_shape)
        self.sim = pbfcl.Solver(capacity=len(x), context=self.context, params={
            "domain_min": self.box[0], "domain_max": self.box[1], "particle_radius": R})
        self.sim.add(x)
        phases = np.full(len(x), pbfcl.PHASE_STATIC, np.int32)
        phases[: self.n_water] = pbfcl.PHASE_FLUID
        self.sim.phases = phases
        return self.observe()

    def held_positions(self):
        c, s = np.cos(self.tilt), np.sin(self.tilt)
        rot = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]], np.float32)
        return self.held_shape @ rot.T + self.pivot

    def step(self, action):
        dx, dy, dtilt = np.clip(np.asarray(action, np.float64), [-0.01, -0.01, -0.05],
                                [0.01, 0.01, 0.05])
        lo, hi = np.array(self.box[0]) + 0.12, np.array(self.box[1]) - 0.12
        self.pivot = np.clip(self.pivot + [dx, dy, 0], lo, hi).astype(np.float32)
        self.tilt = float(np.clip(self.tilt + dtilt, -2.2, 2.2))
        x = self.sim.positions
        x[self.n_water:self.n_water + self.n_held] = self.held_positions()
        self.sim.positions = x  # moves the held cup; the water and the target as they are
        self.sim.step()
        self.frame += 1
        obs = self.observe()
        return obs, self.reward(), self.frame >= self.frames, {"stats": self.sim.stats()}

    def observe(self):
        x = self.sim.positions[: self.n_water]
        img, _, _ = np.histogram2d(x[:, 1], x[:, 0], bins=64,
                                   range=[[0, self.box[1][1]], [0, self.box[1][0]]])
        return img[::-1].astype(np.float32)  # y up

    def reward(self):
        x = self.sim.positions[: self.n_water] - self.target_at
        inside = (np.abs(x[:, 0]) < 0.08) & (np.abs(x[:, 2]) < 0.08) & (x[:, 1] < 0.12)
        return float(inside.mean())

    def close(self):
        if self.sim:
            self.sim.destroy()
        self.context.destroy()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--device", default=None)
    args = parser.parse_args()
    env = PourEnv(device=args.device, frames=args.steps)
    obs = env.reset()
    print(f"{env.n_water} water particles; observation {obs.shape} {obs.dtype}")
    done, t = False, 0
    while not done:
        # scripted policy: move over the target, then tilt towards it
        action = (0.006, 0.0, 0.0) if env.pivot[0] < 0.55 else (0.0, 0.0, -0.03)
        obs, reward, done, info = env.step(action)
        t += 1
        if t % 25 == 0 or done:
            print(f"frame {t:4d}: pivot x {env.pivot[0]:.2f}, tilt {env.tilt:+.2f} rad, "
                  f"reward {reward:.3f}")
    env.close()
