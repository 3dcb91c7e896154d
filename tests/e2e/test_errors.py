"""Bad input gets one clear sentence and the right exit code, never a crash."""
import os
import rsptest as t

t.need_root()

# rspctl without a daemon
p = t.run([t.RSPCTL, "--socket", "/tmp/rsp-no-such.sock", "status"])
t.check(p.returncode == 1 and "no rspd at /tmp/rsp-no-such.sock" in p.stderr,
        "rspctl names the missing daemon: " + p.stderr.strip())
# unknown command and unknown option: usage, exit 2, no daemon needed
p = t.run([t.RSPCTL, "frobnicate"])
t.check(p.returncode == 2 and "unknown command 'frobnicate'" in p.stderr and "EXAMPLES" in p.stderr,
        "unknown command gets usage with examples")
p = t.run([t.RSPCTL, "status", "--bogus"])
t.check(p.returncode == 2 and "unknown option '--bogus'" in p.stderr, "unknown option is named")
p = t.run([t.RSPCTL, "status", "--pid", "abc"])
t.check(p.returncode == 2 and "--pid wants a process id" in p.stderr, "bad --pid value is named")
p = t.run([t.RSPCTL, "help", "status"])
t.check(p.returncode == 0 and "--events" in p.stdout, "help shows a command's options")
# rspd option errors
for args, what in ((["--stacks", "some"], "--stacks"), (["--ring-pages", "3"], "power of two"),
                   (["--window", "10"], "--window"), (["--families", "sched,nope"], "unknown family")):
    p = t.run([t.RSPD, "--foreground"] + args)
    t.check(p.returncode == 2 and what in p.stderr, "rspd %s: %s" % (" ".join(args), p.stderr.strip()))
# not root: one sentence that says what to do
p = t.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", t.RSPD, "--foreground",
           "--socket", "/tmp/rsp-nobody.sock"])
t.check(p.returncode == 1 and "as root" in p.stderr, "unprivileged rspd says to run as root: "
        + p.stderr.strip().splitlines()[-1])
# a second rspd on the same socket is refused, the first keeps running
with t.Rspd() as d:
    p = t.run([t.RSPD, "--foreground", "--socket", d.socket])
    t.check(p.returncode == 1 and "another rspd is already serving" in p.stderr,
            "second rspd refused: " + p.stderr.strip().splitlines()[-1])
    t.check(d.alive() and d.ctl("status")[0] == 0, "first rspd unaffected")
    # a malformed control message gets an error answer; the daemon survives
    import socket, struct
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(d.socket)
    s.sendall(b"GARBAGE!")
    data = s.recv(4096)
    s.close()
    t.check(len(data) >= 12 and struct.unpack("<I", data[:4])[0] == 0x41505352 and b"bad magic" in data,
            "garbage on the socket gets a protocol error answer")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(d.socket)
    s.sendall(struct.pack("<II", 0x51505352, 1 << 30))
    data = s.recv(4096)
    s.close()
    t.check(b"too long" in data, "an oversized request is refused before allocation")
    t.check(d.alive() and d.ctl("status")[0] == 0, "rspd survives malformed messages")
