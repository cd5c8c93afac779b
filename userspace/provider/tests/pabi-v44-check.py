#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Checks pabi.h against rdma-core v44's own provider headers.

pabi_layout.c pins layouts to numbers; this goes further when an rdma-core
v44 source tree is at hand (it is not installed by any package, so this is
a developer tool, not part of the build):

  - every function pabi.h declares is redeclared after v44's driver.h, so a
    prototype that differs from the library's is a "conflicting types"
    error;
  - every member of pabi.h's verbs_context_ops must have exactly the type
    of v44's member of the same name;
  - pabi_layout.c's pinned offsets and sizes are checked against v44's
    structs as well as pabi.h's.

Usage: tests/pabi-v44-check.py RDMA_CORE_V44_TREE
(e.g. a `git archive v44.0` of linux-rdma/rdma-core, unpacked). Exit 0 when
everything matches.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROV = os.path.dirname(HERE)

# What v44's headers need from a CMake-generated config.h.
CONFIG_H = """\
#define SIZEOF_LONG 8
#define STREAM_CLOEXEC "e"
#define VERBS_PROVIDER_DIR "/usr/lib"
#define IBV_CONFIG_DIR "/etc/libibverbs.d"
#define RDMA_CDEV_DIR "/dev/infiniband"
"""


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
    """pabi_layout.c's pins, minus the structs that exist only in pabi.h."""
    keep = []
    for line in layout.splitlines():
        m = re.match(r'PABI_(OFF|SIZE)\((\w+),', line)
        if m and m.group(2) != 'pabi_ex_hdr':
            keep.append(line)
    return keep


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    tree = os.path.abspath(sys.argv[1])
    pabi = open(os.path.join(PROV, 'pabi.h')).read()
    layout = open(os.path.join(PROV, 'pabi_layout.c')).read()

    with tempfile.TemporaryDirectory() as tmp:
        inc = os.path.join(tmp, 'inc')
        os.makedirs(os.path.join(inc, 'infiniband'))
        os.makedirs(os.path.join(inc, 'kernel-abi'))
        libdir = os.path.join(tree, 'libibverbs')
        for f in os.listdir(libdir):
            if f.endswith('.h'):
                os.symlink(os.path.join(libdir, f),
                           os.path.join(inc, 'infiniband', f))
        with open(os.path.join(inc, 'config.h'), 'w') as f:
            f.write(CONFIG_H)
        subprocess.run([sys.executable,
                        os.path.join(tree, 'buildlib', 'make_abi_structs.py'),
                        os.path.join(tree, 'kernel-headers', 'rdma',
                                     'ib_user_verbs.h'),
                        os.path.join(inc, 'kernel-abi', 'ib_user_verbs.h')],
                       check=True)

        lines, nfun, nops = checks_from_pabi(pabi)
        pins = pins_from_layout(layout)
        src = os.path.join(tmp, 'check.c')
        with open(src, 'w') as f:
            f.write('#include <infiniband/driver.h>\n')
            f.write('\n'.join(lines) + '\n')
            f.write('#define PABI_OFF(type, member, off) _Static_assert('
                    'offsetof(struct type, member) == (off), '
                    '"v44: offset of " #type "." #member);\n')
            f.write('#define PABI_SIZE(type, size) _Static_assert('
                    'sizeof(struct type) == (size), "v44: size of " #type);\n')
            f.write('\n'.join(pins) + '\n')
        r = subprocess.run(['cc', '-std=gnu11', '-D_GNU_SOURCE', '-Wall',
                            '-Werror', '-fsyntax-only', '-I', inc,
                            '-I', tree,
                            '-I', os.path.join(tree, 'kernel-headers'), src])
        if r.returncode:
            sys.exit('pabi-v44-check: pabi.h differs from rdma-core v44')
    print('pabi-v44-check: %d functions, %d verbs_context_ops members and '
          '%d layout pins match rdma-core v44' % (nfun, nops, len(pins)))


if __name__ == '__main__':
    main()
