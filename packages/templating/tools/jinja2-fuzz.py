"""Differential fuzzing against real Jinja2: random expressions and blocks.

Writes random templates and what Jinja2 3.1 (sandboxed, StrictUndefined)
renders for them; tools/jinja2-fuzz-compare.ts renders the same with this
package and lists every difference.

    python3 tools/jinja2-fuzz.py SEED COUNT OUT.json [trim_blocks,lstrip_blocks,keep_trailing_newline,extracurly]
    node tools/jinja2-fuzz-compare.ts OUT.json
"""

import copy
import json
import random
import sys

import jinja2
from jinja2.sandbox import SandboxedEnvironment
random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
N = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
OUT = sys.argv[3] if len(sys.argv) > 3 else "jinja2-fuzz-cases.json"

VARS = {"i": 3, "j": -2, "f": 2.5, "g": 1.0, "s": "Hello World", "t": "a,b,,c", "e": "", "n": None, "b": True,
        "l": [3, 1, 2], "ls": ["b", "A", "c"], "d": {"b": 1, "a": 2}, "u": [{"name": "x", "age": 3, "on": True}, {"name": "y", "age": 1, "on": False}],
        "nested": {"k": [1, {"m": "v"}]}, "z": 0, "fl": [1.5, 2.25, -0.5],
        "big": 18446744073709551617, "nb": -9007199254740993}

def lit(depth=0):
    r = random.random()
    if r < 0.12: return str(random.choice([0, 1, -1, 7, 10, 255, 3]))
    # ints beyond 2**53, which must stay exact
    if r < 0.15: return random.choice(["9007199254740993", "(2**64)", "(-(10**20) - 7)", "12345678901234567890", "(2**53)", "big", "nb"])
    if r < 0.25: return random.choice(["1.5", "0.1", "2.0", "-3.25", "1e3", "100.0"])
    if r < 0.4: return repr(random.choice(["a", "Hello", "x y", "", "A,b", " pad ", "it's", "5", "3.5", "%s!"]))
    if r < 0.45: return random.choice(["true", "false", "none"])
    if r < 0.55 and depth < 2: return "[" + ", ".join(expr(depth+1) for _ in range(random.randint(0, 3))) + "]"
    if r < 0.6 and depth < 2: return "{" + ", ".join(f"{repr(k)}: {expr(depth+1)}" for k in random.sample(["a","b","c"], random.randint(0, 2))) + "}"
    return random.choice(list(VARS.keys()))

FILTERS = ["length", "lower", "upper", "title", "capitalize", "trim", "first", "last", "list", "sort", "unique|list", "reverse|list",
           "string", "int", "float", "abs", "round", "round(1)", "sum", "min", "max", "join", "join('-')", "default('D')",
           "tojson", "dictsort", "items|list", "count", "replace('a', 'Z')", "center(9)", "indent(2)", "wordcount",
           "batch(2)|list", "slice(2)|list", "select('odd')|list", "reject('even')|list", "map('string')|list", "e",
           "urlencode", "format(1)", "truncate(5, true, '')", "sort(reverse=true)", "int(5)", "float(1.5)", "d(0)"]
TESTS = ["defined", "none", "string", "number", "integer", "float", "mapping", "iterable", "sequence", "odd", "even",
         "divisibleby(2)", "lower", "upper", "boolean", "true", "false", "eq 1", "in [1, 'a']", "gt 1", "callable"]
METHODS = {"s": [".lower()", ".upper()", ".split()", ".split('o')", ".startswith('He')", ".replace('l', 'L')", ".strip('Hd')", ".title()", ".count('l')", ".find('W')", ".rsplit(' ', 1)", "[1:4]", "[::-1]", "[-1]", ".zfill(14)", ".endswith(('x', 'd'))", ".isdigit()"],
           "t": [".split(',')", ".split(',', 1)", ".rsplit(',', 1)"],
           "d": [".items()|list", ".keys()|list", ".values()|list", ".get('a')", ".get('q', 9)", ".a", "['b']", ".copy()"],
           "l": [".index(1)", ".count(3)", "[0]", "[1:]", "|sort"],
           "u": ["|map(attribute='name')|list", "|selectattr('on')|list", "|sort(attribute='age')|map(attribute='name')|join", "|groupby('on')|list", "|sum(attribute='age')", "|rejectattr('on')|map(attribute='age')|list", "|max(attribute='age')"],
           "nested": [".k[1].m", "['k'][0]", ".k|length"]}
BINOPS = ["+", "-", "*", "/", "//", "%", "**", "~", "==", "!=", "<", "<=", ">", ">=", "and", "or", "in", "not in"]

def expr(depth=0):
    r = random.random()
    if depth >= 3 or r < 0.3: return lit(depth)
    if r < 0.45:
        v = random.choice(list(METHODS.keys())); return v + random.choice(METHODS[v])
    if r < 0.65: return f"{paren(depth)}|{random.choice(FILTERS)}"
    if r < 0.72: return f"{paren(depth)} is {random.choice(['', 'not '])}{random.choice(TESTS)}"
    if r < 0.9:
        op = random.choice(BINOPS)
        # Small exponents only: Python would spend forever on `big ** big`.
        right = random.choice(["2", "3", "0", "-1", "0.5", "j", "z"]) if op == "**" else paren(depth)
        return f"{paren(depth)} {op} {right}"
    if r < 0.95: return f"not {paren(depth)}"
    return f"{paren(depth)} if {paren(depth)} else {paren(depth)}"

def paren(depth):
    e = expr(depth+1)
    return f"({e})" if " " in e else e

def ws():
    return random.choice(["", " ", "\n", "  \n", "\n  ", "\n\n", "\t", " x ", "\na: 1\n"])

def tag(body):
    return "{%" + random.choice(["", "-", "+"]) + " " + body + " " + random.choice(["", "-"]) + "%}"

def emit(e):
    return "{{" + random.choice(["", "-"]) + " " + e + " " + random.choice(["", "-"]) + "}}"

def block(depth=0):
    r = random.random()
    if depth > 2 or r < 0.3: return ws() + emit(expr(2)) + ws()
    if r < 0.4: return ws() + "{#" + random.choice(["", "-"]) + " c " + random.choice(["", "-"]) + "#}" + ws()
    if r < 0.55: return ws() + tag("if " + expr(2)) + body(depth) + tag("else") + body(depth) + tag("endif") + ws()
    if r < 0.7: return ws() + tag("for x in " + random.choice(["l", "ls", "d", "u", "range(3)", "s[:3]", "[]"])) + body(depth) + emit("loop.index ~ loop.first ~ x") + tag("endfor") + ws()
    if r < 0.78: return ws() + tag("set q = " + expr(2)) + ws() + emit("q") + ws()
    if r < 0.86: return ws() + tag("macro mm(a, b=2)") + body(depth) + emit("a ~ b") + tag("endmacro") + ws() + emit("mm(" + expr(2) + ")") + ws()
    if r < 0.92: return ws() + tag("raw") + ws() + "{{ x }}" + ws() + tag("endraw") + ws()
    return ws() + tag("set blk") + body(depth) + tag("endset") + emit("blk|length") + ws()

def body(depth):
    return "".join(block(depth + 1) for _ in range(random.randint(0, 3)))

def template():
    if random.random() < 0.35:
        return body(0) + random.choice(["", "\n", "\n\n"])
    r = random.random()
    if r < 0.6: return "{{ " + expr() + " }}"
    if r < 0.75: return "{% for x in " + paren(0) + " %}[{{ loop.index }}:{{ x }}]{% else %}E{% endfor %}"
    if r < 0.85: return "{% if " + expr() + " %}Y{% else %}N{% endif %}"
    if r < 0.92: return "{% set v = " + expr() + " %}{{ v }}|{{ v|string|length }}"
    return "{{ '%s|%r|%d|%5.2f' % (" + ", ".join([paren(0), paren(0), random.choice(['i','3','j','big']), random.choice(['f','1.2345','i'])]) + ") }}"

OPTIONS = [w for w in (sys.argv[4].split(",") if len(sys.argv) > 4 else []) if w]
WS = [w for w in OPTIONS if w != "extracurly"]
EXTRA_CURLY = "extracurly" in OPTIONS
DELIMITERS = {
    "block_start_string": "{{%", "block_end_string": "%}}",
    "variable_start_string": "{{{", "variable_end_string": "}}}",
    "comment_start_string": "{{#", "comment_end_string": "#}}",
} if EXTRA_CURLY else {}
env = SandboxedEnvironment(undefined=jinja2.StrictUndefined, **{w: True for w in WS}, **DELIMITERS)

def curly(t):
    if not EXTRA_CURLY:
        return t
    out, i = [], 0
    pairs = {"{%": "{{%", "%}": "%}}", "{{": "{{{", "}}": "}}}", "{#": "{{#", "#}": "#}}"}
    while i < len(t):
        two = t[i:i + 2]
        if two in pairs:
            out.append(pairs[two])
            i += 2
        else:
            out.append(t[i])
            i += 1
    return "".join(out)
out = []
for _ in range(N):
    t = curly(template())
    try:
        out.append({"template": t, "expected": env.from_string(t).render(copy.deepcopy(VARS))})
    except Exception as ex:
        out.append({"template": t, "error": f"{type(ex).__name__}: {ex}"})
json.dump({"variables": VARS, "whitespace": WS, "extracurly": EXTRA_CURLY, "cases": out}, open(OUT, "w"))
print(sum(1 for c in out if "error" in c), "errors of", len(out))
