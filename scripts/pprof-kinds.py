#!/usr/bin/env python3
"""Classify the stacks of `go tool pprof -traces BIN PROFILE` (a Go CPU profile
of `loadlab gen --http3 --cpuprofile`) into kinds of work and into the
goroutines that did it; docs/h3-profile.md shows its tables.

Usage: go tool pprof -traces bin/loadlab cpu.prof > t; scripts/pprof-kinds.py t
"""
import re, sys
from collections import Counter

def ms(v):
    m = re.match(r'([\d.]+)(ms|s|us|µs)', v)
    x = float(m.group(1))
    return {'s': 1000, 'ms': 1, 'us': 1e-3, 'µs': 1e-3}[m.group(2)] * x

stacks, cur, val = [], [], None
for line in open(sys.argv[1]):
    if line.startswith('-----------+'):
        if cur: stacks.append((val, cur))
        cur, val = [], None
        continue
    m = re.match(r'\s+([\d.]+(?:ms|s|us|µs))\s+(\S+)', line)
    if m:
        val, cur = ms(m.group(1)), [m.group(2)]
        continue
    m = re.match(r'\s+(\S+)$', line)
    if m and val is not None:
        cur.append(m.group(1))
if cur: stacks.append((val, cur))

def kind(st):
    s = ' '.join(st)
    leaf = st[0]
    if 'sendmsg' in s or 'WriteMsgUDP' in s: return 'UDP send: sendmsg (kernel loopback delivery included)'
    if 'recvmmsg' in s or 'recvmsg' in s: return 'UDP receive: recvmmsg (incl. EAGAIN before parking)'
    if 'netpoll' in s or 'epollwait' in s: return 'scheduler: netpoller (epoll_wait)'
    if 'futex' in s: return 'scheduler: futex (thread wake/sleep)'
    if 'pin.Tasks' in s or 'processAccount' in s or 'StatReader' in s: return 'loadlab: /proc CPU account sampler'
    if 'Syscall' in leaf or 'syscall' in leaf:
        if 'timerfd' in s or 'Timerfd' in s: return 'loadlab: loop timerfd'
        return 'other syscalls'
    if 'gcBgMarkWorker' in s or 'bgsweep' in s or 'gcAssist' in s or 'markroot' in s or 'scavenge' in s: return 'runtime: GC (mark, sweep, assist)'
    if re.search(r'runtime\.(mallocgc|newobject|makeslice|growslice|nextFreeFast|memclr|newarray|makemap|mapassign|rawstring|concatstring|slicebytetostring)', s) and not 'copystack' in s:
        return 'runtime: allocation'
    if re.search(r'runtime\.(schedule|findRunnable|park_m|mcall|goready|ready|selectgo|chansend|chanrecv|gopark|lock2|unlock2|sellock|selunlock|runqget|runqput|wakep|execute|gogo|goexit|newstack|copystack|morestack|stopm|startm)', s):
        return 'scheduler: goroutine hand-offs, channels, select'
    if re.search(r'runtime\.(nanotime|walltime)|time\.(Now|Since|Until)|monotime', leaf) : return 'clock reads'
    if re.search(r'runtime\.(.*[tT]imer|siftup|siftdown|timeSleep|resettimer|modtimer|deltimer)|time\.(NewTimer|\(\*Timer\))', s): return 'timers (runtime timer heap)'
    if re.search(r'crypto/|handshake\.\(\*(xorNonceAEAD|aesHeaderProtector|chachaHeaderProtector|longHeaderSealer|shortHeaderSealer|updatableAEAD)', s): return 'quic-go: crypto (AEAD, header protection)'
    if re.search(r'quic-go/http3|quic-go/qpack|hpack|net/http|net/textproto|net/url', s) and not re.search(r'quic-go\.\(\*Conn\)\.run|sendQueue|Transport\)\.listen', s):
        return 'http3 client layer (streams, QPACK, frames, http.Request/Response)'
    if 'quic-go' in s: return 'quic-go: connection (packets, acks, flow/congestion control, streams)'
    if 'loadlab/gen' in s: return 'loadlab: worker, settle, record'
    return 'other: ' + leaf

c = Counter()
tot = 0
for v, st in stacks:
    c[kind(st)] += v
    tot += v
for k, v in c.most_common():
    print(f'{v:8.0f} ms {100*v/tot:5.1f}%  {k}')
print(f'{tot:8.0f} ms 100.0%  total')

def owner(st):
    s = ' '.join(st)
    root = ' '.join(st[-4:])
    if 'sendQueue' in s: return 'quic-go send-queue goroutine (one per conn)'
    if 'Transport).listen' in s: return 'quic-go Transport.listen goroutine (one per UDP socket)'
    if 'Conn).run' in s: return 'quic-go Conn.run goroutine (one per conn)'
    if 'h3Conn' in s: return 'loadlab worker goroutine (http3 client calls)'
    if 'processAccount' in s: return 'loadlab CPU account sampler'
    if 'lifecycle' in s or 'h3Loop' in s: return 'loadlab loop goroutine'
    if 'gcBgMarkWorker' in s or 'bgsweep' in s or 'bgscavenge' in s: return 'runtime GC workers'
    if re.search(r'runtime\.(mcall|schedule|findRunnable|park_m|mstart|sysmon)', s): return 'runtime scheduler (no goroutine)'
    return 'other: ' + st[-1]
print()
c = Counter()
for v, st in stacks:
    c[owner(st)] += v
for k, v in c.most_common():
    print(f'{v:8.0f} ms {100*v/tot:5.1f}%  {k}')
