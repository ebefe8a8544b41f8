"""Events and where they come from: loaders, column checks, time axes, domains, kernels, simulation."""
