# Shared by the systemtap.xlate/*.exp tests of the in-process engine
# (runtime/xlate/) through its test client runtime/xl-driver
# (testsuite/unit-xlate/xl-driver.c). Target programs are in
# testsuite/unit-xlate/ and built at -O2; each test checks with objdump
# that its case really is in the code.

set xl_udir [file normalize [file join [stap_test_dir] .. unit-xlate]]
set xl_bdir [file join $stap_objdir xlate.tmp]
set xl_driver [file join $stap_top_builddir runtime xl-driver]
file mkdir $xl_bdir

# Build unit-xlate/SRC into xlate.tmp/OUT at -O2 (and FLAGS).
proc xl_build {src out {flags {}}} {
    global xl_udir xl_bdir
    return [stap_compile_prog [file join $xl_udir $src] [file join $xl_bdir $out] \
                [concat {-O2} $flags]]
}

# The disassembly of function FUNC of BIN (objdump), "" if none.
proc xl_disasm {bin func} {
    set out ""
    catch {exec objdump -d --no-show-raw-insn $bin} out
    set body {}
    set in 0
    foreach line [split $out "\n"] {
        if {[regexp {^[0-9a-f]+ <([^>]+)>:} $line -> name]} {
            set in [expr {$name eq $func}]
            continue
        }
        if {$in} { lappend body $line }
    }
    return [join $body "\n"]
}

# Does FUNC of BIN match the regexp RE (one line)? Logs WHAT when not.
# FUNC may be a list (labels inside a function split it for objdump).
proc xl_has {bin func re what} {
    set code ""
    foreach f $func {
        append code [xl_disasm $bin $f] "\n"
    }
    if {[regexp -line $re $code]} {
        return 1
    }
    verbose -log "xlate: $func of $bin has no $what (objdump)"
    return 0
}

# Run the driver with OPTS over TARGET (a list: program in xlate.tmp, then
# its arguments). CHECKS is a list of:
#   {tree LINES}  the driver's tree lines ("xl: -> ..."/"<- ..."/"=> ...")
#                 are exactly LINES (a list of lines without the "xl: ")
#   expect        the tree is exactly the target's "expect: LINE" lines
#                 that are tree lines; for its other "expect: LINE" lines
#                 the driver printed "xl: LINE"
#   expect-lines  for each "expect: LINE" of the target the driver printed
#                 "xl: LINE"
#   same          the target's output equals an untraced run's
#   {line TEXT}   the driver printed the line TEXT
#   {target TEXT} the target printed the line TEXT
#   {exit HOW}    the target's exit ("status=0", "signal=11")
# Any "FAIL..." line of the driver, a non-zero driver status or a
# sanitizer report fails the test.
proc xl_case {name opts target checks} {
    global xl_bdir xl_driver
    set cmd [concat [list [file join $xl_bdir [lindex $target 0]]] [lrange $target 1 end]]
    lassign [stap_exec $xl_bdir $xl_driver [concat $opts [list --] $cmd]] rc out err
    set ok 1
    if {$rc ne "0"} {
        verbose -log "$name: driver exit status $rc"
        set ok 0
    }
    if {[stap_sanitizer_report $err]} {
        verbose -log "$name: sanitizer report"
        set ok 0
    }
    set tree {}
    set dlines {}
    set tlines {}
    foreach l [split [string trimright $out "\n"] "\n"] {
        if {[regexp {^xl: *(->|<-|=>) } $l]} {
            lappend tree [string range $l 4 end]
        } elseif {[regexp {^(xl: |FAIL)} $l]} {
            lappend dlines $l
            if {[string match "FAIL*" $l]} {
                verbose -log "$name: driver says: $l"
                set ok 0
            }
        } else {
            lappend tlines $l
        }
    }
    foreach c $checks {
        set kind [lindex $c 0]
        set arg [lindex $c 1]
        if {$kind eq "tree"} {
            if {$tree ne $arg} {
                stap_log_diff "call tree" [join $arg "\n"] [join $tree "\n"]
                set ok 0
            }
        } elseif {$kind eq "expect"} {
            set want {}
            foreach l $tlines {
                if {![regexp {^expect: (.*)$} $l -> w]} {
                    continue
                }
                if {[regexp {^ *(->|<-|=>) } $w]} {
                    lappend want $w
                } elseif {[lsearch -exact $dlines "xl: $w"] < 0} {
                    verbose -log "$name: missing driver line: xl: $w"
                    set ok 0
                }
            }
            if {$tree ne $want} {
                stap_log_diff "call tree" [join $want "\n"] [join $tree "\n"]
                set ok 0
            }
        } elseif {$kind eq "expect-lines"} {
            foreach l $tlines {
                if {[regexp {^expect: (.*)$} $l -> w] && [lsearch -exact $dlines "xl: $w"] < 0} {
                    verbose -log "$name: missing driver line: xl: $w"
                    set ok 0
                }
            }
        } elseif {$kind eq "same"} {
            lassign [stap_exec $xl_bdir [lindex $cmd 0] [lrange $cmd 1 end]] urc uout uerr
            if {[join $tlines "\n"] ne [string trimright $uout "\n"]} {
                stap_log_diff "target output" [string trimright $uout "\n"] [join $tlines "\n"]
                set ok 0
            }
        } elseif {$kind eq "target"} {
            if {[lsearch -exact $tlines $arg] < 0} {
                verbose -log "$name: the target did not print: $arg"
                set ok 0
            }
        } elseif {$kind eq "line" || $kind eq "exit"} {
            set want [expr {$kind eq "exit" ? "xl: exit $arg" : $arg}]
            if {[lsearch -exact $dlines $want] < 0} {
                verbose -log "$name: missing driver line: $want"
                set ok 0
            }
        } else {
            verbose -log "$name: unknown check $c"
            set ok 0
        }
    }
    if {!$ok} {
        verbose -log "$name: driver output:\n$out\nstderr:\n$err"
        fail $name
    } else {
        pass $name
    }
}

# The driver must have been built (make check builds it).
proc xl_driver_ok {} {
    global xl_driver
    if {![file executable $xl_driver]} {
        fail "xlate: $xl_driver not built (make -C runtime xl-driver)"
        return 0
    }
    return 1
}
