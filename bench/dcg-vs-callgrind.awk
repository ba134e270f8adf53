# The counting and naming of bench/dcg-vs-callgrind.sh (mawk or gawk; no
# gawk extensions). `mode` selects the program:
#   mi    nm -S -C / readelf -SW output of a module -> "P lo hi" (its PLT
#         sections) and "S vaddr size name" (function symbols), in decimal
#   size  readelf -lW -> the extent of the LOAD segments (0x...)
#   cg    a callgrind.out file -> "count<TAB>name" per callee, named as
#         in our tree (mods: the modules file, mi: the module info dir,
#         main: the executable's path)
#   tree  our tree -> "count<TAB>name" per callee
#   cmp   the two counts (cgf: callgrind's file; then ours) -> the
#         comparison line and the mismatches (cpumap; ign: "program or
#         *<TAB>regex<TAB>reason" lines; prog; all_mm)

function hex(s,   i, v) {
	v = 0; s = tolower(s); sub(/^0x/, "", s)
	for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}
function tohex(v,   s, d) {
	s = ""
	do { d = v % 16; s = substr("0123456789abcdef", d + 1, 1) s; v = (v - d) / 16 } while (v > 0)
	return "0x" s
}
function base(p) { sub(/.*\//, "", p); return p }

# Of two aliases, the one shown: fewer leading underscores, shorter, less.
function better(a, b,   ua, ub) {
	match(a, /^_*/); ua = RLENGTH
	match(b, /^_*/); ub = RLENGTH
	if (ua != ub) return ua < ub
	if (length(a) != length(b)) return length(a) < length(b)
	return a < b
}
# The modules (mods: "basename<TAB>path<TAB>bias under valgrind<TAB>size")
# and their symbols: SYM[bn, vaddr] the name shown there, SIZE[bn, vaddr]
# the largest size of one, ADDR[bn, name] its vaddr; PLO/PHI[bn, i] the
# PLT sections.
function load_mods(   l, a, f, k, bn, n) {
	while ((getline l < mods) > 0) {
		split(l, a, "\t")
		k = ++NMOD; bn = MBN[k] = a[1]; MOD[bn] = a[2]; MBIAS[k] = hex(a[3]); MSIZE[k] = hex(a[4])
		f = mi "/" bn
		while ((getline l < f) > 0) {
			split(l, a, " ")
			if (a[1] == "P") { k = ++NPLT[bn]; PLO[bn, k] = a[2]; PHI[bn, k] = a[3]; continue }
			n = l; sub(/^S [0-9]+ [0-9]+ /, "", n)
			if (!((bn, a[2]) in SYM) || better(n, SYM[bn, a[2]])) SYM[bn, a[2]] = n
			if (!((bn, a[2]) in SIZE) || a[3] > SIZE[bn, a[2]]) SIZE[bn, a[2]] = a[3]
			ADDR[bn, n] = a[2]
		}
		close(f)
	}
}

# ---- mi ----
mode == "mi" && /^P / { print "P", hex($2), hex($2) + hex($3); next }
mode == "mi" {
	# "vaddr size type name" or "vaddr type name" (no size)
	sz = 0; t = 2
	if (length($2) == length($1) && $2 ~ /^[0-9a-f]+$/ && $3 ~ /^[A-Za-z]$/) { sz = hex($2); t = 3 }
	if ($t !~ /^[TtWi]$/) next
	n = $0
	for (i = 1; i <= t; i++) sub(/^[^ ]+ /, "", n)
	sub(/@.*/, "", n)
	print "S", hex($1), sz, n
	next
}

# ---- size ----
mode == "size" && $1 == "LOAD" { e = hex($3) + hex($6); if (e > m) m = e; next }
mode == "size" { next }

# ---- cg: callgrind's file ----
# "(id) name" or "(id)" -> ID, NAME
function idname(s) {
	ID = ""; NAME = s
	if (match(s, /^\([0-9]+\)/)) {
		ID = substr(s, 2, RLENGTH - 2)
		NAME = substr(s, RLENGTH + 1)
		sub(/^ /, "", NAME)
	}
}
# code at vaddr off of module bn with no name from callgrind: a PLT stub,
# the module's symbol, or bn+0xOFF as our tree names it
function at(bn, off,   i) {
	for (i = 1; i <= NPLT[bn]; i++)
		if (off >= PLO[bn, i] && off < PHI[bn, i])
			return "[PLT] " bn "+" tohex(off)
	if ((bn, off) in SYM)
		return MOD[bn] == main ? SYM[bn, off] : SYM[bn, off] " [" bn "]"
	return bn "+" tohex(off)
}
# callgrind names unnamed code in a module's .text by its vaddr there,
# elsewhere (PLT, .init, .fini) by its run-time address in object "???"
function unnamed(ob, a,   i) {
	a = hex(a)
	if (ob != "???")
		return base(ob) "+" tohex(a)
	for (i = 1; i <= NMOD; i++)
		if (a >= MBIAS[i] && a < MBIAS[i] + MSIZE[i])
			return at(MBN[i], a - MBIAS[i])
	return tohex(a)
}
function objname(s) {
	idname(s)
	if (ID != "" && NAME != "") objn[ID] = NAME
	return ID != "" ? objn[ID] : NAME
}
mode == "cg" && /^ob=/ { ob = cob = objname(substr($0, 4)); next }
mode == "cg" && /^cob=/ { cob = objname(substr($0, 5)); next }
mode == "cg" && /^c?fn=/ {
	c = /^cfn=/
	idname(substr($0, c ? 5 : 4))
	if (NAME != "" && !(ID in fname)) { fname[ID] = NAME; fobj[ID] = c ? cob : ob }
	if (c) callee = ID
	next
}
# a callee's object is given (cob=) when it is not the caller's
mode == "cg" && /^calls=/ { split(substr($0, 7), a, " "); cnt[callee] += a[1]; cob = ob; next }
mode == "cg" { next }

# ---- tree: "%6d comm(tid):<indent>->name[ (signal SIGx)]" ----
mode == "tree" && match($0, /\([0-9]+\): *->/) {
	n = substr($0, RSTART + RLENGTH)
	sub(/ \(signal SIG[A-Z0-9?]+\)$/, "", n)
	cnt[n]++
	next
}
mode == "tree" { next }

# ---- cmp ----
# One name per function: the least of its aliases; a function whose
# symbols have no size is module+0xOFF (valgrind names none such); a CPU
# variant is what glibc picks under valgrind.
function norm(n,   f, bn, a, i) {
	f = n; bn = main
	if (match(f, / \[[^] ]+\]$/)) { bn = substr(f, RSTART + 2, RLENGTH - 3); f = substr(f, 1, RSTART - 1) }
	if ((bn, f) in ADDR) {
		a = ADDR[bn, f]
		if (!SIZE[bn, a]) return bn "+" tohex(a)
		f = SYM[bn, a]
	}
	for (i = 1; i <= ncpu; i++)
		if (f ~ cpupat[i]) sub(cpufrom[i], cputo[i], f)
	if ((bn, f) in ADDR) f = SYM[bn, ADDR[bn, f]]
	return bn == main ? f : f " [" bn "]"
}
function ignored(n,   i) {
	for (i = 1; i <= nig; i++)
		if ((igprog[i] == "*" || igprog[i] == prog) && n ~ igre[i]) return 1
	return 0
}
mode == "cmp" && FILENAME == cgf { c = norm($2); cg[c] += $1; all[c] = 1; next }
mode == "cmp" { c = norm($2); us[c] += $1; all[c] = 1; next }

BEGIN {
	if (mode == "cg" || mode == "cmp") load_mods()
	if (mode == "cmp") {
		FS = "\t"; main = base(main)
		while ((getline l < cpumap) > 0) {
			split(l, a, "\t"); cpupat[++ncpu] = a[1]; cpufrom[ncpu] = a[2]; cputo[ncpu] = a[3]
		}
		while ((getline l < ign) > 0) { split(l, a, "\t"); igprog[++nig] = a[1]; igre[nig] = a[2] }
	}
}
END {
	if (mode == "size") print tohex(m)
	if (mode == "tree") for (n in cnt) print cnt[n] "\t" n
	if (mode == "cg")
		for (i in cnt) {
			n = fname[i]; o = fobj[i]
			sub(/'[0-9]+$/, "", n)
			if (n ~ /^0x[0-9a-f]+( \[[A-Z]+\])?$/) {
				sub(/ .*/, "", n)
				n = unnamed(o, n)
			} else {
				sub(/@.*/, "", n)
				if (o != main) n = n " [" base(o) "]"
			}
			print cnt[i] "\t" n
		}
	if (mode == "cmp") {
		for (n in all) {
			if (ignored(n)) { nign++; continue }
			nf++; ncalls += cg[n]
			if (cg[n] != us[n]) mm[++nmm] = sprintf("%s: callgrind %d, dcg %d", n, cg[n], us[n])
		}
		printf("%-8s %5d functions %8d calls %4d mismatches  (%d ignored; callgrind %s, stap %s)\n",
		       prog, nf, ncalls, nmm, nign, cgsecs, ussecs)
		for (i = 1; i <= nmm && (all_mm || i <= 5); i++) print "    " mm[i]
	}
}
