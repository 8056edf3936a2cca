"""``argonishche bench``, in the manner of ``openssl speed``: our backends against the peers.

Honest by construction:

- every subject must produce the same tag at a point before any of them is timed;
- subjects are timed **interleaved** (round-robin, rotating the order each repetition), so drift
  in a shared, noisy machine's speed hits all of them alike, and ratios are computed from the
  same repetitions;
- every figure is a median over repetitions, shown with its min and max and its spread, and the
  run ends with a verdict on how noisy the machine was (spreads, load average, CPU steal);
- the mode is named on every row: ``hot`` is steady state (the same inputs hashed back to back,
  caches and allocator warm); ``cold`` is one hash per sample after a read of a buffer larger
  than the last-level cache, with work memory allocated for that hash (``allocator="system"``,
  as the reference implementation and the peers do); ``first`` is the first hash at a point in
  a new process (``--profile``);
- every Argon2 row says whether its hashes' work memory was reused or fresh, from our counters
  and the page faults, not from what the mode is meant to be;
- time is wall time (``perf_counter``), never CPU time, which counts every thread's work.
  Cycles are core cycles, from a timed chain of dependent additions, not TSC ticks.

Where each part is, lower layers first (none imports one further down this list):

- ``progress``: the progress bar drawn on a terminal's stderr;
- ``machine``: the machine's description, its last-level cache, its load and CPU steal;
- ``memory_use``: whether work memory was reused or fresh (the memory column);
- ``timing``: subjects, interleaved repetitions, medians and spreads, hot and cold (cache
  eviction), the core clock estimate (with the compiled helper ``_clock``);
- ``points``: the Argon2 parameter points, the password and the salt;
- ``peers``: argon2-cffi, PyNaCl and cryptography, imported only when asked for;
- ``fresh_process``: the first hash in a new process, one interpreter per sample;
- ``report``: the tables, ratios and their JSON, and the noise verdict;
- ``suites``: what is measured: Argon2 points, allocators x wipe, batch, start-up, BLAKE2b;
- ``profiles``: ``--profile``: named sets of points, each steady and as a first hash;
- ``plot``: ``--plot``, with matplotlib (optional);
- ``command``: the ``bench`` subcommand's flags and run, added to the CLI by ``_cli``.
"""
