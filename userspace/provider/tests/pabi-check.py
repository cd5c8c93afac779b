#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Checks pabi.h against one rdma-core release's own provider headers.

pabi_layout.c pins layouts to numbers; this goes further, for a built
rdma-core release tree (scripts/rdma-core-build makes one; the headers are
not installed by any package):

  - every function pabi.h and the release's pabi-v<PABI>.h declare is
    redeclared after the release's driver.h, so a prototype that differs
    from the library's is a "conflicting types" error;
  - every member of the generation's verbs_context_ops must have exactly
    the type of the release's member of the same name, and the release's
    table must have no member the generation's lacks;
  - pabi_layout.c's pins for that release are checked against the
    release's structs as well as pabi.h's.

Usage: tests/pabi-check.py RELEASE_TREE
(RELEASE_TREE/build holds the cmake build). Exit 0 when everything matches.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROV = os.path.dirname(HERE)



def statements(text):
    """Top-level C statements of a header, comments and cpp lines removed."""
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    text = re.sub(r'//[^\n]*', '', text)
    text = re.sub(r'^#(?:[^\n]*\\\n)*[^\n]*\n', '', text, flags=re.M)
    depth, cur, out = 0, '', []
    for ch in text:
        cur += ch
        if ch == '{':
            depth += 1
        elif ch == '}':
            depth -= 1
        elif ch == ';' and depth == 0:
            out.append(cur.strip())
            cur = ''
    return out


def for_generation(text, pabi):
    """text without the blocks of "#if PABI_VERSION >= N" for N > pabi."""
    out, skip = [], False
    for line in text.splitlines():
        m = re.match(r'#if PABI_VERSION >= (\d+)$', line)
        if m:
            skip = int(m.group(1)) > pabi
            continue
        if skip and line.startswith('#endif'):
            skip = False
            continue
        if not skip:
            out.append(line)
    return '\n'.join(out) + '\n'


def checks_from_pabi(pabi):
    lines, nfun, nops = [], 0, 0
    for st in statements(pabi):
        m = re.match(r'struct verbs_context_ops\s*\{(.*)\}\s*;$', st, re.S)
        if m:
            for member in m.group(1).split(';'):
                member = ' '.join(member.split())
                if not member:
                    continue
                name = re.search(r'\(\*\s*(\w+)\s*\)', member)
                typedef = ('typedef ' + member[:name.start()] +
                           '(*pabi_op_' + name.group(1) + ')' +
                           member[name.end():] + ';')
                lines.append(typedef)
                lines.append(
                    '_Static_assert(__builtin_types_compatible_p('
                    'pabi_op_{0}, __typeof__(((struct verbs_context_ops *)0)'
                    '->{0})), "verbs_context_ops.{0}");'.format(name.group(1)))
                nops += 1
            continue
        if st.startswith(('static', 'typedef', 'enum', 'union', 'struct')):
            continue
        if re.match(r'^[\w\s\*]+\b\w+\s*\([^;]*\)\s*;$', st, re.S):
            lines.append(st)
            nfun += 1
    return lines, nfun, nops


def pins_from_layout(layout):
    """pabi_layout.c's pins, minus the structs that exist only in pabi.h;
    its #if lines stay, for the preprocessor to pick the release's."""
    keep = []
    for line in layout.splitlines():
        m = re.match(r'PABI_(OFF|SIZE)\((\w+),', line)
        if (m and m.group(2) != 'pabi_ex_hdr') or \
           re.match(r'#(if|elif|else|endif)\b', line):
            keep.append(line)
    return keep


def release_of(tree):
    """The major release and PABI of a built tree, from its CMakeLists."""
    cml = open(os.path.join(tree, 'CMakeLists.txt')).read()
    rel = re.search(r'set\(PACKAGE_VERSION "(\d+)\.', cml).group(1)
    pabi = re.search(r'set\(IBVERBS_PABI_VERSION "(\d+)"\)', cml).group(1)
    return int(rel), int(pabi)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    tree = os.path.abspath(sys.argv[1])
    rel, pabi = release_of(tree)
    gen = os.path.join(PROV, 'pabi-v%d.h' % pabi)
    if not os.path.exists(gen):
        sys.exit('pabi-check: rdma-core %d has PABI %d, which libsiw2 does '
                 'not know' % (rel, pabi))
    decls = for_generation(open(os.path.join(PROV, 'pabi.h')).read() +
                           open(gen).read(), pabi)
    layout = open(os.path.join(PROV, 'pabi_layout.c')).read()
    drv = open(os.path.join(tree, 'libibverbs', 'driver.h')).read()
    theirs = re.findall(r'\(\*\s*(\w+)\s*\)', re.search(
        r'struct verbs_context_ops\s*\{(.*?)\n\};', drv, re.S).group(1))

    lines, nfun, nops = checks_from_pabi(decls)
    ours = re.findall(r'\(\*\s*(\w+)\s*\)', re.search(
        r'struct verbs_context_ops\s*\{(.*?)\n\};', decls, re.S).group(1))
    if ours != theirs:
        sys.exit('pabi-check: verbs_context_ops for PABI %d differs from '
                 'rdma-core %d\'s: %s' % (pabi, rel,
                                          sorted(set(ours) ^ set(theirs))))
    pins = pins_from_layout(layout)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, 'check.c')
        with open(src, 'w') as f:
            f.write('#define SIW2_RDMA_CORE %d\n#define PABI_VERSION %d\n'
                    % (rel, pabi))
            f.write('#include <infiniband/driver.h>\n')
            f.write('#define pabi_register_driver verbs_register_driver_%d\n' % pabi)
            f.write('\n'.join(lines) + '\n')
            f.write('#define PABI_OFF(type, member, off) _Static_assert('
                    'offsetof(struct type, member) == (off), '
                    '"release: offset of " #type "." #member);\n')
            f.write('#define PABI_SIZE(type, size) _Static_assert('
                    'sizeof(struct type) == (size), "release: size of " '
                    '#type);\n')
            f.write('\n'.join(pins) + '\n')
        build = os.path.join(tree, 'build')
        r = subprocess.run(['cc', '-std=gnu11', '-D_GNU_SOURCE', '-Wall',
                            '-Werror', '-fsyntax-only',
                            '-I', os.path.join(build, 'include'),
                            '-I', build, '-I', tree, src])
        if r.returncode:
            sys.exit('pabi-check: pabi.h differs from rdma-core %d' % rel)
    npins = sum(1 for p in pins if p.startswith('PABI_'))
    print('pabi-check: rdma-core %d (PABI %d): %d functions, %d '
          'verbs_context_ops members and the layout pins match' %
          (rel, pabi, nfun, nops))

if __name__ == '__main__':
    main()
