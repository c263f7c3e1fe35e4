"""Batch: many runs of one model, on a process pool or a Dask cluster (:mod:`.sweep`)."""
