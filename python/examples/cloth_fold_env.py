"""A SoftGym-style cloth folding environment on pbfcl (SoftGym's ClothFold): a square cloth lies
on the floor and two pickers grasp, carry and release it. reset() -> observation;
step(action) -> (observation, reward, done, info).

The cloth comes from a scene dict's `cloth` key (a grid cooked into a solid group, distance
constraints and triangles, docs/SCENES.md); the environment then splits it into two solid
groups, the half to fold and the half it folds onto, so that the halves collide with each
other (a group's particles do not). A picker holds the cloth particles within `pick_radius`
of it while its grip is closed: they are made static (inverse mass 0: the library refuses 0
for a solid group's particle, so it is the static phase that pins) and moved with the picker
through Solver.set_positions; their neighbours follow through the distance constraints.

- action: float (2, 4), per picker (dx, dy, dz, grip): a move in m, each component clipped to
  `max_move`, and grip > 0.5 to hold (a closed grip takes the particles near it when it
  closes and keeps them until it opens).
- observation: "cam_rgb", the picture Solver.render draws from above (uint8 (size, size, 3));
  or "key_point", the positions of the cloth's four corners and the two pickers (float32
  (6, 3)), which needs no renderer.
- reward: SoftGym ClothFold's, -(the mean distance between each particle of the folding half
  and its mirror image in the other half + 1.2 x the mean distance the other half moved from
  where it lay): about -(the cloth's half width) flat, 0 folded exactly. info also gives
  folded_fraction (the share of the folding half within 1.5 spacings, horizontally, of its
  mirror particle), corner_distance (the mean distance of the two folding corners to the
  corners they fold onto, m) and normalized_performance (0 at reset, 1 folded exactly).

    python3 cloth_fold_env.py [--device D] [--out frames.png]    a scripted fold, printing the
                                                                 reward
"""
import argparse

import numpy as np

import pbfcl

R = 0.01  # particle radius, m


class ClothFoldEnv:
    """reset() / step(action) as SoftGym's ClothFold, with two pickers."""

    def __init__(self, device=None, context=None, resolution=21, size=0.4, mass=0.2,
                 frames_per_step=2, horizon=100, observation="cam_rgb", image_size=64,
                 max_move=0.02, pick_radius=0.015, friction=1.0):
        if observation not in ("cam_rgb", "key_point"):
            raise ValueError("observation must be 'cam_rgb' or 'key_point'")
        self.context = context if context is not None else pbfcl.Context(device=device)
        self.own_context = context is None
        self.nu = self.nv = resolution
        self.size, self.mass = size, mass
        self.frames_per_step, self.horizon = frames_per_step, horizon
        self.observation, self.image_size = observation, image_size
        self.max_move, self.pick_radius = max_move, pick_radius
        self.box = np.array([[0.0, 0.0, 0.0], [size + 0.2, 0.3, size + 0.2]], np.float32)
        self.table_top, self.friction = 0.01, friction
        self.sim = None

    def scene(self):
        """The scene: the cloth flat just above the floor, and the few fluid particles of a
        puddle in a corner (a scene has fluid)."""
        return {
            "name": "cloth-fold",
            "domain": {"min": self.box[0].tolist(), "max": self.box[1].tolist()},
            "particle_radius": R,
            "fluid": [{"min": [0.0, 0.0, 0.0], "max": [0.04, 0.02, 0.04]}],
            "cloth": [{"corner": [0.1, self.table_top + R + 0.002, 0.1], "u": [self.size, 0, 0],
                       "v": [0, 0, self.size], "resolution": [self.nu, self.nv],
                       "mass": self.mass, "bend_compliance": 0.01}],
            "solver": {"iterations": 8, "substeps": 3},
        }

    def cloth(self, i, j):
        """The index of the cloth's particle (i, j): i along u (x), j along v (z)."""
        return self.first + j * self.nu + i

    def reset(self):
        if self.sim:
            self.sim.destroy()
        self.sim = pbfcl.Solver(self.scene(), context=self.context)
        self.first = self.sim.count - self.nu * self.nv  # the fill puts the cloth last
        self.ids = np.arange(self.first, self.sim.count)
        self.inv_mass = float(self.sim.inverse_masses[self.first])
        half = self.nu // 2
        i = (self.ids - self.first) % self.nu
        self.groups = np.where(i < half, 0, 1).astype(np.uint32)  # 0 folds onto 1
        j = (self.ids - self.first) // self.nu
        keep = i < half
        self.fold_a = self.ids[keep]                             # particle (i, j), i < half
        self.fold_b = self.first + j[keep] * self.nu + (self.nu - 1 - i[keep])  # (nu-1-i, j)
        self.held = [np.zeros(0, np.int64), np.zeros(0, np.int64)]
        self.offsets = [np.zeros((0, 3), np.float32)] * 2
        self.regroup()
        top = self.table_top
        centre = (self.box[0] + self.box[1]) / 2
        self.table = self.sim.create_shape(  # the floor is frictionless: a table that is not
            "box", half_extents=(centre[0], 0.05, centre[2]), position=(centre[0], top - 0.05,
                                                                         centre[2]),
            friction=self.friction, static_friction=self.friction, name="table")
        for _ in range(5):  # settle onto the table
            self.sim.step()
        x = self.sim.positions
        self.rest_b = x[self.fold_b].copy()
        corners = [self.cloth(0, 0), self.cloth(0, self.nv - 1)]
        self.targets = [self.cloth(self.nu - 1, 0), self.cloth(self.nu - 1, self.nv - 1)]
        self.target_at = x[self.targets].copy()
        self.pickers = x[corners].copy()
        self.grip = [False, False]
        self.steps = 0
        self.reward_at_reset = self.reward()
        return self.observe()

    def regroup(self):
        """The cloth's groups with the held particles static (pinned): setting the phases
        clears the groups, which are then set again for the particles not held."""
        held = np.concatenate(self.held)
        phases = np.zeros(self.sim.count, np.int32)
        phases[held] = pbfcl.PHASE_STATIC
        self.sim.phases = phases
        free = ~np.isin(self.ids, held)
        self.sim.set_groups(self.ids[free], self.groups[free], self.inv_mass)

    def step(self, action):
        action = np.asarray(action, np.float64).reshape(2, 4)
        move = np.clip(action[:, :3], -self.max_move, self.max_move)
        grip = action[:, 3] > 0.5
        x = self.sim.positions
        changed = False
        for p in range(2):
            if grip[p] and not self.grip[p]:  # closes: takes what is near
                d = np.linalg.norm(x[self.ids] - self.pickers[p], axis=1)
                self.held[p] = self.ids[d <= self.pick_radius]
                self.offsets[p] = x[self.held[p]] - self.pickers[p]
                changed = True
            elif not grip[p] and self.grip[p]:  # opens: lets go
                self.held[p] = np.zeros(0, np.int64)
                self.offsets[p] = np.zeros((0, 3), np.float32)
                changed = True
            self.grip[p] = bool(grip[p])
        if changed:
            self.regroup()
        lo, hi = self.box[0] + 2 * R, self.box[1] - 2 * R
        for _ in range(self.frames_per_step):
            self.pickers = np.clip(self.pickers + move / self.frames_per_step, lo, hi)
            x = self.sim.positions
            for p in range(2):
                if len(self.held[p]):
                    x[self.held[p]] = np.clip(self.pickers[p] + self.offsets[p], lo, hi)
            self.sim.positions = x
            self.sim.step()
        self.steps += 1
        reward = self.reward()
        info = self.info(reward)
        return self.observe(), reward, self.steps >= self.horizon, info

    def reward(self):
        x = self.sim.positions
        a, b = x[self.fold_a], x[self.fold_b]
        fold = np.linalg.norm(a - b, axis=1).mean()
        moved = np.linalg.norm(b - self.rest_b, axis=1).mean()
        return float(-(fold + 1.2 * moved))

    def info(self, reward):
        x = self.sim.positions
        spacing = self.size / (self.nu - 1)
        flat = np.linalg.norm((x[self.fold_a] - x[self.fold_b])[:, [0, 2]], axis=1)
        corners = [self.cloth(0, 0), self.cloth(0, self.nv - 1)]
        return {
            "folded_fraction": float((flat <= 1.5 * spacing).mean()),
            "corner_distance": float(np.linalg.norm(x[corners] - self.target_at, axis=1).mean()),
            "normalized_performance": float((reward - self.reward_at_reset)
                                            / (0.0 - self.reward_at_reset)),
            "stats": self.sim.stats(),
        }

    def observe(self):
        if self.observation == "key_point":
            x = self.sim.positions
            corners = [self.cloth(0, 0), self.cloth(self.nu - 1, 0), self.cloth(0, self.nv - 1),
                       self.cloth(self.nu - 1, self.nv - 1)]
            return np.concatenate([x[corners], self.pickers]).astype(np.float32)
        return self.render()

    def render(self, size=None):
        """The scene from above, uint8 (size, size, 3) (Solver.render, spheres)."""
        size = size or self.image_size
        centre = (self.box[0] + self.box[1]) / 2
        eye = (centre[0], 1.1, centre[2] + 1e-3)
        return self.sim.render(eye=eye, target=(centre[0], 0.0, centre[2]), up=(0, 0, -1),
                               fov=35, width=size, height=size, mode="spheres")

    def close(self):
        if self.sim:
            self.sim.destroy()
            self.sim = None
        if self.own_context:
            self.context.destroy()


def scripted_fold(env, lift=0.06, steps=None):
    """Actions that fold the cloth in half along v: both pickers (over corners (0, 0) and
    (0, nv - 1)) close, rise by lift, carry the corners over the far edge, come down and open."""
    span = float(env.target_at[0, 0] - env.pickers[0, 0])
    carry = steps or int(np.ceil(span / env.max_move))
    up = int(np.ceil(lift / env.max_move))
    actions = [[(0, 0, 0, 1)] * 2]
    actions += [[(0, env.max_move, 0, 1)] * 2] * up
    actions += [[(span / carry, 0, 0, 1)] * 2] * carry
    actions += [[(0, -env.max_move, 0, 1)] * 2] * up
    actions += [[(0, 0, 0, 0)] * 2] * 3
    return [np.array(a, np.float64) for a in actions]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--out", default=None, help="a PNG of the start and the end (matplotlib)")
    parser.add_argument("--observation", default="cam_rgb", choices=("cam_rgb", "key_point"))
    args = parser.parse_args()
    env = ClothFoldEnv(device=args.device, observation=args.observation)
    first = env.reset()
    print(f"{env.nu} x {env.nv} cloth, {env.sim.count} particles; observation {first.shape} "
          f"{first.dtype}; reward {env.reward():.4f}")
    for t, action in enumerate(scripted_fold(env)):
        obs, reward, done, info = env.step(action)
        if t % 5 == 0:
            print(f"step {t:3d}: reward {reward:+.4f}, folded {info['folded_fraction']:.2f}, "
                  f"corners {info['corner_distance']:.3f} m from their targets")
    print(f"end: reward {reward:+.4f}, normalized performance "
          f"{info['normalized_performance']:.2f}")
    if args.out and args.observation == "cam_rgb":
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(1, 2, figsize=(6, 3))
        for a, img, title in ((ax[0], first, "reset"), (ax[1], obs, "folded")):
            a.imshow(img)
            a.set_title(title)
            a.axis("off")
        fig.savefig(args.out, dpi=100)
    env.close()
