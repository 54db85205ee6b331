#!/usr/bin/env python3
"""Counts the public API items of the workspace crates from rustdoc JSON.

An item counts once however many public paths reach it: modules, structs, enums and
their variants, unions, traits and their items, functions, constants, statics, type
aliases, macros, public fields and the public methods and constants of inherent impls.
Trait impls, auto-trait and blanket impls do not count. A re-export is followed into
the crate it names when that crate's JSON is at hand (the workspace crates), so the
facade counts what its `pub use`s expose; a re-export of another crate (`async_trait`)
counts as one item. Hidden (`#[doc(hidden)]`) items are not in the JSON.

Two figures per crate: named items (what a `use` can name: modules, types, traits, free
functions, constants, statics, type aliases, macros, re-exports of other crates) and all
items with their members (fields, variants, methods, trait items).

Usage: scripts/public-items.py DOC_DIR CRATE...   (DOC_DIR holds `<crate>.json`)
Made by scripts/public-items (nightly rustdoc, `--output-format json`, all features).
"""
import collections
import json
import os
import sys

COUNTED = {"module", "struct", "enum", "variant", "union", "trait", "function", "constant",
           "static", "type_alias", "macro", "proc_macro", "assoc_const", "assoc_type",
           "struct_field", "trait_alias"}


def load(doc_dir, name):
    path = os.path.join(doc_dir, name + ".json")
    if not os.path.exists(path):
        return None
    data = json.load(open(path))
    by_path = {tuple(p["path"]): int(i) for i, p in data["paths"].items() if p["crate_id"] == 0}
    return {"data": data, "by_path": by_path}


def count(doc_dir, crate):
    crates = {}

    def get(name):
        if name not in crates:
            crates[name] = load(doc_dir, name)
        return crates[name]

    seen = set()
    kinds = collections.Counter()
    top = collections.Counter()
    external = set()

    def visit(name, item_id, member=False):
        c = get(name)
        key = (name, item_id)
        if key in seen:
            return
        item = c["data"]["index"].get(str(item_id))
        if item is None:
            # Not in this crate's index: an item of another crate named by path.
            p = c["data"]["paths"].get(str(item_id))
            if p is None:
                return
            ext = c["data"]["external_crates"][str(p["crate_id"])]["name"]
            other = get(ext)
            target = other and other["by_path"].get(tuple(p["path"]))
            if target is None:
                external.add("::".join(p["path"]))
                return
            return visit(ext, target, member)
        seen.add(key)
        kind, inner = next(iter(item["inner"].items()))
        if kind == "use":
            if inner.get("id") is None:
                external.add(inner["source"])
                return
            if inner["is_glob"]:
                target = c["data"]["index"].get(str(inner["id"]))
                if target and "module" in target["inner"]:
                    for child in target["inner"]["module"]["items"]:
                        visit(name, child)
                    return
            return visit(name, inner["id"])
        if kind in COUNTED and item["crate_id"] == 0:
            kinds[kind] += 1
            if not member:
                top[kind] += 1
        if kind == "module":
            for child in inner["items"]:
                visit(name, child)
        elif kind == "struct":
            sk = inner["kind"]
            fields = []
            if isinstance(sk, dict):
                fields = sk.get("plain", {}).get("fields", []) if "plain" in sk else sk.get("tuple", [])
            for f in fields:
                if f is not None:
                    visit(name, f, True)
            impls(name, inner["impls"])
        elif kind == "enum":
            for v in inner["variants"]:
                visit(name, v, True)
            impls(name, inner["impls"])
        elif kind == "variant":
            vk = inner["kind"]
            if isinstance(vk, dict) and "struct" in vk:
                for f in vk["struct"]["fields"]:
                    visit(name, f, True)
        elif kind == "union":
            for f in inner["fields"]:
                visit(name, f, True)
            impls(name, inner["impls"])
        elif kind == "trait":
            for t in inner["items"]:
                visit(name, t, True)

    def impls(name, ids):
        index = get(name)["data"]["index"]
        for i in ids:
            imp = index.get(str(i))
            if imp is None:
                continue
            body = imp["inner"]["impl"]
            if body["trait"] is not None or body.get("blanket_impl") or body.get("is_synthetic"):
                continue
            for m in body["items"]:
                member = index.get(str(m))
                if member and member["visibility"] == "public":
                    visit(name, m, True)

    root = get(crate)
    if root is None:
        sys.exit(f"no {crate}.json in {doc_dir}")
    visit(crate, root["data"]["root"])
    return sum(kinds.values()) + len(external), kinds, sum(top.values()) + len(external), external


def main():
    doc_dir, names = sys.argv[1], sys.argv[2:]
    for name in names:
        total, kinds, named, external = count(doc_dir, name)
        detail = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
        print(f"{name}: {named} named items (modules, types, traits, free functions, constants, "
              f"macros, re-exports of other crates), {total} with members ({detail}, "
              f"re-exports of other crates {len(external)})")


if __name__ == "__main__":
    main()
