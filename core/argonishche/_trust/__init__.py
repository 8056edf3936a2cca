"""The trust layer: what decides that a kernel may run, and what it keeps to decide faster.

A registered backend reaches selection only through :mod:`.vetting`, which runs, in this order:

1. :mod:`.cpu_gate`: the CPU and the OS give every feature the backend needs (else its module is
   never imported);
2. :mod:`.kernel_table`: the module's table has this ABI, its size, no NULL, the compiled target;
3. :mod:`.self_test`: the quick known answers and placements, every start-up;
4. for a third-party module, :mod:`.certification`: the full checks
   (:mod:`.certification_checks`, :mod:`.certification_blake2b`) once per code
   (:mod:`.code_identity`), first in a child interpreter (:mod:`.child_launch`,
   :mod:`.certification_child`), remembered in the user's cache (:mod:`.record_store`).

After selection, :mod:`.witness` recomputes every Argon2 tag a third-party kernel makes.
"""
