"""Solvers made without a context share one per device, so only the first compiles kernels
(a context keeps its programs); a destroyed shared context is replaced, not reused."""
import pbfcl


def test_solvers_without_a_context_share_one(device):
    a = pbfcl.Solver(capacity=64, device=device)
    b = pbfcl.Solver(capacity=64, device=device)
    assert a.context is b.context
    assert a.context.alive
    other = pbfcl.Context(device=device)
    c = pbfcl.Solver(capacity=64, context=other)
    assert c.context is other and c.context is not a.context
    c.destroy()
    other.destroy()
    shared = a.context
    shared.destroy()  # takes a and b along
    assert not a.alive and not b.alive
    d = pbfcl.Solver(capacity=64, device=device)
    assert d.alive and d.context.alive and d.context is not shared
    d.step()
    d.destroy()
