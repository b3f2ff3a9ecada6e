"""torch-pme PME calculator that caches the k-vectors computed from the cell and reuses them while the cell does not change.

Source: https://github.com/lab-cosmo/torch-pme/issues/62
Thread: A developer of the library reported that the k-vector caching added in an earlier PR breaks a second backward with the same calculator instance when the cell has not changed: the first potential/backward works, but computing the potential again for new positions and an equal cell raises "Trying to backward through the graph a second time". The cached k-vectors were built from the first call's cell (which requires grad) and carry that call's graph, which the first backward freed. The stored copy of the issue shows the report only, not the change that closed it.
Cause: BEFORE_THE_LOOP
Fix: Do not reuse k-vectors that still carry an earlier call's graph: recompute them from the cell passed in each call (the cell needs its gradient, so detaching the cache would silently drop it).
Fix mentions: recompute, cell
Fix must not say: retain_graph=True, detach()
"""
import math

import torch


class PMEPotential(torch.nn.Module):
    def __init__(self, atomic_smearing=1.0, n_max=2):
        super().__init__()
        self.atomic_smearing, self.n_max = atomic_smearing, n_max
        self._cell_cache = None
        self._kvectors_cache = None

    def _compute_kvectors(self, cell):
        reciprocal = 2 * math.pi * torch.linalg.inv(cell).T
        r = torch.arange(-self.n_max, self.n_max + 1, dtype=cell.dtype)
        ns = torch.cartesian_prod(r, r, r)
        return ns @ reciprocal  # made

    def forward(self, positions, charges, cell):
        if self._cell_cache is None or not torch.equal(cell, self._cell_cache):
            self._kvectors_cache = self._compute_kvectors(cell)
            self._cell_cache = cell.detach().clone()
        kvectors = self._kvectors_cache
        k2 = (kvectors ** 2).sum(dim=1)
        keep = k2 > 0
        kvectors, k2 = kvectors[keep], k2[keep]
        kernel = torch.exp(-0.5 * self.atomic_smearing ** 2 * k2) / k2
        phases = positions @ kvectors.T
        s_cos = (charges * torch.cos(phases)).sum(dim=0)
        s_sin = (charges * torch.sin(phases)).sum(dim=0)
        volume = torch.abs(torch.linalg.det(cell))
        return 2 * math.pi / volume * (kernel * (s_cos ** 2 + s_sin ** 2)).sum()


def main():
    torch.manual_seed(0)
    calculator = PMEPotential()
    for structure in range(2):
        positions = 5 * torch.rand((10, 3), requires_grad=True)
        cell = 5 * torch.eye(3, requires_grad=True)
        charges = torch.rand((10, 1))
        output = calculator(positions, charges, cell)  # called
        output = output.sum()
        output.backward()  # freed fails


if __name__ == "__main__":
    main()
