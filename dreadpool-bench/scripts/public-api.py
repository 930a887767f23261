#!/usr/bin/env python3
"""Lists a crate's public API from rustdoc's JSON output, one item a line.

Each line is an item's kind, its public path and its signature (rustdoc's
description of it, with source positions, docs and internal ids left out),
so that two listings of the same crate, taken before and after a change that
should not touch the API, can be compared with `diff`. Run by
`public-api.sh`, which makes the JSON.
"""
import json
import sys

DROPPED = {"span", "docs", "links", "attrs", "deprecation", "crate_id", "impls",
           "implementations", "items", "blanket_impl"}


def main(path):
    doc = json.load(open(path))
    index, paths = doc["index"], doc["paths"]

    public = {}

    def name_of(item_id):
        # The path a user writes, where the walk found one: where an item is
        # defined inside the crate is not part of its API.
        if item_id in public:
            return public[item_id]
        known = paths.get(str(item_id))
        if known:
            return "::".join(known["path"])
        item = index.get(str(item_id))
        return item["name"] if item else None

    def member(item_id):
        # A field or variant, by its name and what it holds (not its id,
        # which changes with any edit of the crate).
        item = index.get(str(item_id))
        if item is None:
            return None
        return {"name": item["name"], "inner": scrub(item["inner"])}

    def scrub(value):
        if isinstance(value, dict):
            out = {}
            for key, inner in value.items():
                if key == "id":
                    out["ref"] = name_of(inner)
                elif key in ("fields", "variants", "tuple") and isinstance(inner, list):
                    out[key] = [member(i) if isinstance(i, int) else scrub(i) for i in inner]
                elif key == "path" and "id" in value:
                    # The path as written at the use site (`super::X`); the
                    # resolved `ref` says what it is.
                    continue
                elif key not in DROPPED:
                    out[key] = scrub(inner)
            return out
        if isinstance(value, list):
            return [scrub(inner) for inner in value]
        return value

    found = []

    def emit(kind, where, body):
        found.append((kind, where, body))

    def impls_of(where, ids):
        for impl_id in ids:
            impl = index.get(str(impl_id))
            if not impl:
                continue
            header = impl["inner"]["impl"]
            if header.get("blanket_impl") is not None:
                continue
            trait = header.get("trait")
            emit("impl", where, header)
            for member_id in header.get("items", []):
                member = index.get(str(member_id))
                if member and (trait or member["visibility"] == "public"):
                    kind = next(iter(member["inner"]))
                    emit(kind, f"{where}::{member['name']}", member["inner"])

    def walk(item_id, where, seen):
        item = index.get(str(item_id))
        if item is None or item_id in seen:
            return
        seen = seen | {item_id}
        public.setdefault(item_id, where)
        kind = next(iter(item["inner"]))
        inner = item["inner"][kind]
        if kind == "module":
            emit("mod", where, {})
            for child_id in inner["items"]:
                child = index.get(str(child_id))
                if child is None or child["visibility"] != "public":
                    continue
                child_kind = next(iter(child["inner"]))
                if child_kind == "use":
                    use = child["inner"]["use"]
                    target = use.get("id")
                    if use.get("is_glob"):
                        glob = index.get(str(target))
                        if glob:
                            for grand in glob["inner"]["module"]["items"]:
                                g = index.get(str(grand))
                                if g and g["visibility"] == "public":
                                    walk(grand, f"{where}::{g['name']}", seen)
                    elif target is not None and str(target) in index:
                        walk(target, f"{where}::{use['name']}", seen)
                    else:
                        emit("use", f"{where}::{use['name']}", {"source": use["source"]})
                else:
                    walk(child_id, f"{where}::{child['name']}", seen)
            return
        emit(kind, where, item["inner"])
        if kind in ("struct", "enum", "union"):
            impls_of(where, inner.get("impls", []))
            if kind == "enum":
                for variant_id in inner.get("variants", []):
                    variant = index.get(str(variant_id))
                    if variant:
                        emit("variant", f"{where}::{variant['name']}", variant["inner"])
        if kind == "trait":
            for member_id in inner.get("items", []):
                member = index.get(str(member_id))
                if member:
                    emit("trait_item", f"{where}::{member['name']}", member["inner"])

    root = doc["root"]
    walk(root, index[str(root)]["name"], frozenset())
    lines = {f"{kind} {where} {json.dumps(scrub(body), sort_keys=True)}"
             for kind, where, body in found}
    for line in sorted(lines):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1])
