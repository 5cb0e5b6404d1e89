# SPDX-License-Identifier: GPL-2.0-or-later
"""python/vkcu/_lib.py mirrors include/vkcu/ by hand: this compares the two.

usage: python-abi.py ROOT WORKDIR (with VKCU_LIBRARY naming the build's
libvkcu.so, which _lib.py loads)

From the headers: every typedef struct with each field's name, offset, size
and kind (integer signed or not, enum, floating, pointer, struct, array of
one of those), every enumerator and every object-like VKCU_ macro with a
number or a string for its value. The fields are found by reading the
headers; a small C program compiled against them prints the layout with
offsetof and sizeof, so the compiler, not this script, says where each field
is (and a field read wrong does not compile). Then the same from the ctypes
mirror: _lib._STRUCTS names a class per struct, and each constant is a name
of the module. One PASS or FAIL line per struct and per header's constants,
and per vocabulary (PATHS, BACKENDS ...) that _lib.py builds from an enum;
a struct, field or constant missing or different in Python is a FAIL.
"""
import ctypes
import os
import re
import subprocess
import sys

root, work = sys.argv[1], sys.argv[2]
inc = os.path.join(root, "include", "vkcu")
headers = sorted(f for f in os.listdir(inc) if f.endswith(".h"))


def strip_comments(text):
    return re.sub(r"/\*.*?\*/", " ", text, flags=re.S)


structs = []    # (header, name, [(field, is_enum, is_array)])
enums = []      # (header, enumerator)
macros = []     # (header, name)
problems = []   # what the header reading itself could not follow
for h in headers:
    src = open(os.path.join(inc, h)).read()
    for m in re.finditer(r"^#define (VKCU_\w+)(?!\()[ \t]+\S", src, flags=re.M):
        if m.group(1) != "VKCU_API":
            macros.append((h, m.group(1)))
    code = strip_comments(src)
    code = re.sub(r"^\s*#.*$", "", code, flags=re.M)
    for m in re.finditer(r"\benum\s+\w+\s*\{(.*?)\}", code, flags=re.S):
        for entry in m.group(1).split(","):
            if entry.strip():
                enums.append((h, re.match(r"\s*(\w+)", entry).group(1)))
    for m in re.finditer(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", code, flags=re.S):
        if m.group(1) != m.group(3):
            problems.append(f"{h}: typedef struct {m.group(1)} is named {m.group(3)}")
        fields = []
        for decl in m.group(2).split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            # `int a, b[4]`, `const char *const *include`: the type, then declarators
            parts = decl.split(",")
            first = re.match(r"(.*?)((?:\*\s*(?:const\s+)?)*)(\w+)\s*((?:\[[^\]]+\])*)$", parts[0])
            if not first or not first.group(1).strip():
                problems.append(f"{h}: {m.group(1)}: cannot read the field '{decl}'")
                continue
            is_enum = re.match(r"(const\s+)?enum\b", first.group(1).strip()) is not None
            declarators = [(first.group(2), first.group(3), first.group(4))]
            for p in parts[1:]:
                d = re.match(r"\s*((?:\*\s*(?:const\s+)?)*)(\w+)\s*((?:\[[^\]]+\])*)\s*$", p)
                if not d:
                    problems.append(f"{h}: {m.group(1)}: cannot read '{p.strip()}' in '{decl}'")
                    continue
                declarators.append(d.groups())
            for stars, name, dims in declarators:
                fields.append((name, is_enum and not stars, bool(dims)))
        structs.append((h, m.group(1), fields))

# ---- the compiler's view ----
prog = ["#include <stddef.h>", "#include <stdio.h>", "#include <vkcu/vkcu.h>",
        # kind of an lvalue: s/u integer, f floating, p pointer, r struct (GCC/clang's classification)
        "static char kind(int cls, int is_unsigned) {",
        "    switch (cls) {",
        "    case 1: case 2: case 3: case 4: return is_unsigned ? 'u' : 's';",
        "    case 8: return 'f';",
        "    case 5: return 'p';",
        "    case 12: return 'r';",
        "    default: return '?';",
        "    }",
        "}",
        "#define KIND(x) kind(__builtin_classify_type(x), _Generic((x), unsigned char: 1, unsigned short: 1, \\",
        "                     unsigned int: 1, unsigned long: 1, unsigned long long: 1, default: 0))",
        "static void num(const char *n, long long v) { printf(\"const %s i %lld\\n\", n, v); }",
        "static void str(const char *n, const char *v) { printf(\"const %s s %s\\n\", n, v); }",
        "#define CONSTANT(n) _Generic((n), char *: str, const char *: str, default: num)(#n, n)",
        "int main(void) {"]
for h, s, fields in structs:
    prog.append(f'    printf("struct {s} %zu\\n", sizeof({s}));')
    for name, _, is_array in fields:
        lv = f"((({s} *)0)->{name})"
        elem = f"{lv}[0]" if is_array else lv
        prog.append(f'    printf("field {s} {name} %zu %zu %c %zu\\n", offsetof({s}, {name}), sizeof({lv}), '
                    f'KIND({elem}), {"sizeof(" + elem + ")" if is_array else "(size_t)0"});')
for _, e in enums:
    prog.append(f"    num(\"{e}\", (long long){e});")
for _, n in macros:
    prog.append(f"    CONSTANT({n});")
prog += ["    return 0;", "}"]
c_file, exe = os.path.join(work, "abi.c"), os.path.join(work, "abi")
open(c_file, "w").write("\n".join(prog) + "\n")
cc = subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-Wall", "-Wextra", "-Werror",
                     "-I" + os.path.join(root, "include"), "-o", exe, c_file], capture_output=True, text=True)
if cc.returncode:
    print("FAIL python-abi: the layout program does not compile (a field read wrong from the headers?): " +
          " ".join(cc.stderr.split())[:400])
    sys.exit(0)
out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
c_size, c_fields, c_const = {}, {}, {}
for line in out.splitlines():
    w = line.split(" ", 3)
    if w[0] == "struct":
        c_size[w[1]] = int(w[2])
    elif w[0] == "field":
        off, size, kind, elem = line.split()[3:]
        c_fields.setdefault(w[1], []).append((w[2], int(off), int(size), kind, int(elem)))
    else:
        typ, val = w[2], w[3] if len(w) > 3 else ""
        c_const[w[1]] = int(val) if typ == "i" else val

for p in problems:
    print(f"FAIL python-abi: reading the headers: {p}")
# The fields read must tile each struct: only alignment padding between them.
for h, s, fields in structs:
    end = 0
    for name, off, size, kind, elem in c_fields.get(s, []):
        if off < end or off - end >= 8:
            print(f"FAIL python-abi: reading {h}: {s}.{name} at {off} after a field ending at {end}: a field "
                  "was missed or read twice")
        end = off + size
    if c_size[s] - end >= 8:
        print(f"FAIL python-abi: reading {h}: {s} is {c_size[s]} bytes, its last field read ends at {end}")

# ---- the mirror's view ----
sys.path.insert(0, os.path.join(root, "python"))
try:
    from vkcu import _lib
except Exception as e:  # the layout check at load, or a library that is not there
    print(f"FAIL python-abi: python/vkcu/_lib.py does not load: {e}")
    sys.exit(0)


def py_kind(t):
    """As the C program classifies: s/u integer, f floating, p pointer, r struct."""
    if issubclass(t, ctypes.Structure):
        return "r"
    if issubclass(t, (ctypes._Pointer, ctypes._CFuncPtr)) or t in (ctypes.c_void_p, ctypes.c_char_p):
        return "p"
    if t in (ctypes.c_float, ctypes.c_double):
        return "f"
    if t is ctypes.c_char:
        return "s"
    return "s" if t(-1).value < 0 else "u"


for h, s, fields in structs:
    cls = _lib._STRUCTS.get(s)
    if cls is None:
        print(f"FAIL python-abi: {s} ({h}) is not mirrored in python/vkcu/_lib.py (_STRUCTS)")
        continue
    bad = []
    if ctypes.sizeof(cls) != c_size[s]:
        bad.append(f"{ctypes.sizeof(cls)} bytes, the header's {c_size[s]}")
    py_fields = {(n[:-1] if n.endswith("_") else n): t for n, t in cls._fields_}
    py_names = {(n[:-1] if n.endswith("_") else n): n for n, _ in cls._fields_}
    c_names = [f[0] for f in c_fields[s]]
    missing = [n for n in c_names if n not in py_fields]
    extra = [n for n in py_fields if n not in c_names]
    if missing:
        bad.append("lacks " + ", ".join(missing))
    if extra:
        bad.append("has fields the header lacks: " + ", ".join(extra))
    enum_fields = {f[0] for f in fields if f[1]}
    for name, off, size, kind, elem in c_fields[s]:
        if name not in py_fields:
            continue
        t, d = py_fields[name], getattr(cls, py_names[name])
        if (d.offset, d.size) != (off, size):
            bad.append(f"{name} at {d.offset} ({d.size} bytes), the header's at {off} ({size} bytes)")
            continue
        if elem:  # an array: compare its element
            if not issubclass(t, ctypes.Array) or ctypes.sizeof(t._type_) != elem:
                bad.append(f"{name} is not an array of {elem}-byte elements")
                continue
            t = t._type_
        pk = py_kind(t)
        if name in enum_fields:
            if pk not in "su" or size != 4:
                bad.append(f"{name}: an enum, mirrored as {t.__name__}")
        elif pk != kind:
            bad.append(f"{name}: kind {kind} in the header, {pk} ({t.__name__}) in Python")
    if bad:
        print(f"FAIL python-abi: {s} ({h}): " + "; ".join(bad))
    else:
        print(f"PASS python-abi: {s} ({h}): {c_size[s]} bytes, {len(c_names)} fields at the header's offsets")

for h in headers:
    names = [e for hh, e in enums if hh == h] + [n for hh, n in macros if hh == h]
    if not names:
        continue
    bad = []
    for n in names:
        if not hasattr(_lib, n):
            bad.append(f"{n} missing")
        elif getattr(_lib, n) != c_const[n]:
            bad.append(f"{n} = {getattr(_lib, n)!r}, the header's {c_const[n]!r}")
    if bad:
        print(f"FAIL python-abi: constants of {h}: " + "; ".join(bad))
    else:
        print(f"PASS python-abi: constants of {h}: {len(names)} with the header's values")

# The vocabularies the package offers, built from an enum: every enumerator
# of it present, under its name (the enumerator's last word, lower case) or,
# for PATHS, with the library's name for it.
VOCABULARIES = {"PATHS": "VKCU_PATH_", "BACKENDS": "VKCU_BACKEND_", "TIMINGS": "VKCU_READER_TIMING_",
                "ALIGNS": "VKCU_ALIGN_", "HASH_ALGOS": "VKCU_HASH_"}
path_name = ctypes.CDLL(_lib.lib._name).vkcu_path_name  # a handle of its own: _lib's prototypes stay as they are
path_name.restype, path_name.argtypes = ctypes.c_char_p, [ctypes.c_int]
for vocab, prefix in VOCABULARIES.items():
    members = {e: c_const[e] for _, e in enums if e.startswith(prefix) and not e.startswith("VKCU_HASH_FORMAT_")}
    table = getattr(_lib, vocab, None)
    if table is None:
        print(f"FAIL python-abi: {vocab} missing from python/vkcu/_lib.py")
        continue
    bad = []
    for e, v in members.items():
        if vocab == "PATHS":
            want = path_name(v).decode()
            if table.get(v) != want:
                bad.append(f"{e} ({v}): {table.get(v)!r}, the library's {want!r}")
        else:
            word = e[len(prefix):].lower()
            if table.get(word) != v:
                bad.append(f"{e}: {word!r} is {table.get(word)!r}, the header's {v}")
    if bad:
        print(f"FAIL python-abi: {vocab}: " + "; ".join(bad))
    else:
        print(f"PASS python-abi: {vocab}: every {prefix}* of the headers")
