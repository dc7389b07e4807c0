"""No import cycles among our packages: every module of app, adapters, bot, rules and brain sits above the modules
it imports, so each can be read (and tested) with only what is below it. Imports under TYPE_CHECKING and inside
functions count: a type a module names, or a module it reaches for at run time, is a dependency too. The layers
themselves are import-linter's contracts (pyproject.toml, `lint-imports`)."""

from __future__ import annotations

import grimp

PACKAGES = ("app", "adapters", "bot", "rules", "brain")

# Cycles known and owned by other work; each entry must still be a cycle, exactly, or the test says so.
KNOWN_CYCLES: frozenset[frozenset[str]] = frozenset()


def import_cycles(graph: grimp.ImportGraph) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), each a set of modules that
    import one another, directly or not."""
    imports = {module: sorted(graph.find_modules_directly_imported_by(module)) for module in sorted(graph.modules)}
    index: dict[str, int] = {}
    lowest: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[frozenset[str]] = []

    def visit(module: str) -> None:
        index[module] = lowest[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in imports[module]:
            if imported not in index:
                visit(imported)
                lowest[module] = min(lowest[module], lowest[imported])
            elif imported in on_stack:
                lowest[module] = min(lowest[module], index[imported])
        if lowest[module] == index[module]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(frozenset(component))

    for module in imports:
        if module not in index:
            visit(module)
    return cycles


def describe(graph: grimp.ImportGraph, cycle: frozenset[str]) -> str:
    lines = []
    for importer in sorted(cycle):
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & cycle):
            details = graph.get_import_details(importer=importer, imported=imported)
            where = ", ".join(f"l.{d['line_number']}" for d in details)
            lines.append(f"  {importer} -> {imported} ({where})")
    return "\n".join(lines)


def test_no_module_imports_itself_through_others() -> None:
    graph = grimp.build_graph(*PACKAGES, exclude_type_checking_imports=False, cache_dir=None)
    cycles = import_cycles(graph)
    new = [cycle for cycle in cycles if cycle not in KNOWN_CYCLES]
    assert not new, "import cycles:\n" + "\n\n".join(describe(graph, cycle) for cycle in new)
    gone = KNOWN_CYCLES - set(cycles)
    assert not gone, f"no longer cycles (remove them from KNOWN_CYCLES): {sorted(sorted(c) for c in gone)}"


def test_a_cycle_is_found_whatever_closes_it() -> None:
    graph = grimp.ImportGraph()
    for module in ("pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.d"):
        graph.add_module(module)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.c")
    graph.add_import(importer="pkg.c", imported="pkg.a")
    graph.add_import(importer="pkg.c", imported="pkg.d")
    assert import_cycles(graph) == [frozenset({"pkg.a", "pkg.b", "pkg.c"})]
