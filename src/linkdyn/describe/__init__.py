"""Describe: the user-facing ways to say what a mechanism is, each validating as it goes and
producing element records. :mod:`.builder` (:class:`linkdyn.ModelBuilder`), :mod:`.modelfile`
(JSON model files) and :mod:`.geometric` (linkages from points, lines and planes). Their
``build()`` hands the records to :mod:`linkdyn.compile`."""
