# ACL users (Redis 7.0): ACL SETUSER/GETUSER/DELUSER/LIST/USERS/WHOAMI/CAT/
# GENPASS/LOG/SAVE/LOAD/DRYRUN/HELP, AUTH and HELLO AUTH through users,
# NOPERM errors, key/channel patterns, selectors, requirepass, aclfile and
# "user" directives, CLIENT LIST user= and CLIENT KILL USER.
#
# Where Redis lists single commands of a rule description in its hash-table
# order (which changes from run to run), the tests use rules whose
# description is made of categories or of one single command only.

set NOPERM_CMD {NOPERM this user has no permissions to run the '%s' command}
set NOPERM_KEY {NOPERM this user has no permissions to access one of the keys used as arguments}
set NOPERM_CHAN {NOPERM this user has no permissions to access one of the channels used as arguments}
set WRONGPASS {WRONGPASS invalid username-password pair or user is disabled.}

# A client authenticated as user/pass.
proc acl_client {user pass} {
    set c [redis_client]
    $c auth $user $pass
    return $c
}

# Field of a flat key/value list (GETUSER, ACL LOG entries).
proc field {reply name} {
    dict get [kv $reply] $name
}

# Delete every user but the default one (a failed test leaves no traces).
proc acl_clean {} {
    foreach u [r acl users] {
        if {$u ne "default"} {r acl deluser $u}
    }
    r acl setuser default on nopass ~* &* +@all clearselectors
}

# The ACL LIST line of a user.
proc acl_list_user {name} {
    foreach l [r acl list] {
        if {[string match "user $name *" $l]} {return $l}
    }
    return ""
}

# The ACL LOG entries without their age and client-info (which differ from
# run to run), as lists of key/value pairs.
proc acl_log_stable {{count 100}} {
    set out {}
    foreach e [r acl log $count] {
        set d [kv $e]
        dict unset d age-seconds
        dict unset d client-info
        lappend out $d
    }
    return $out
}

start_server {tags {acl}} {
    # Redis keeps a requirepass with a NUL byte whole; Goblin keeps settings
    # as text and refuses it rather than keeping the part before the NUL
    # (ACL SETUSER passwords are binary-safe).
    test {CONFIG SET requirepass with a NUL byte is refused and changes nothing} {
        assert_error {*must not contain NUL bytes*} {r config set requirepass "abc\x00def"}
        assert_equal {} [lindex [r config get requirepass] 1]
        set c [redis_client]
        assert_error {*without any password configured*} {$c auth abc}
        $c close
        r acl setuser nuluser on ">abc\x00def" +@all ~*
        set c [redis_client]
        assert_error {WRONGPASS*} {$c auth nuluser abc}
        assert_equal OK [$c auth nuluser "abc\x00def"]
        $c close
        r acl deluser nuluser
    } {goblin_only}


    # --- The default user and the listing commands ----------------------------------

    test {ACL LIST, USERS and WHOAMI with only the default user} {
        acl_clean
        assert_equal {{user default on nopass ~* &* +@all}} [r acl list]
        assert_equal {default} [r acl users]
        assert_equal default [r acl whoami]
    }

    test {ACL GETUSER of the default user} {
        acl_clean
        set u [r acl getuser default]
        assert_equal {flags {on nopass} passwords {} commands +@all keys ~* channels &* selectors {}} $u
    }

    test {ACL GETUSER of a missing user is a null} {
        acl_clean
        assert_equal "\$-1\r\n" [r rawcall acl getuser nosuchuser]
    }

    test {ACL SETUSER creates a disabled user with no permissions} {
        acl_clean
        assert_equal OK [r acl setuser newbie]
        assert_equal {user newbie off resetchannels -@all} [acl_list_user newbie]
        assert_equal {flags off passwords {} commands -@all keys {} channels {} selectors {}} \
            [r acl getuser newbie]
        assert_equal {default newbie} [r acl users]
        r acl deluser newbie
    }

    test {ACL USERS and LIST are sorted by name} {
        acl_clean
        r acl setuser zed
        r acl setuser abe
        r acl setuser ab
        assert_equal {ab abe default zed} [r acl users]
        assert_equal {user ab off resetchannels -@all} [lindex [r acl list] 0]
        assert_equal 3 [r acl deluser zed abe ab nosuch]
    }

    # --- Passwords -------------------------------------------------------------------------

    test {Passwords are stored as SHA-256 hex digests} {
        acl_clean
        # FIPS 180-4 test vectors, and the hash Redis shows for ">x".
        r acl setuser pw reset >abc
        assert_equal {ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad} \
            [field [r acl getuser pw] passwords]
        r acl setuser pw resetpass >abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq
        assert_equal {248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1} \
            [field [r acl getuser pw] passwords]
        r acl setuser pw resetpass >
        assert_equal {e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855} \
            [field [r acl getuser pw] passwords]
        r acl setuser pw resetpass ">[string repeat a 1000]" >x
        assert_equal {41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3 2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881} \
            [field [r acl getuser pw] passwords]
        assert_equal {user pw off sanitize-payload #41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3 #2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 resetchannels -@all} \
            [acl_list_user pw]
        r acl deluser pw
    }

    test {Password rules: > < # ! nopass resetpass} {
        acl_clean
        r acl setuser pw on >one >two >one
        assert_equal 2 [llength [field [r acl getuser pw] passwords]]
        r acl setuser pw <one
        assert_equal {3fc4ccfe745870e2c0d99f71f30ff0656c8dedd41cc1d7d3d376b0dbe685e2f3} \
            [field [r acl getuser pw] passwords]
        r acl setuser pw !3fc4ccfe745870e2c0d99f71f30ff0656c8dedd41cc1d7d3d376b0dbe685e2f3
        assert_equal {} [field [r acl getuser pw] passwords]
        r acl setuser pw #2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881
        assert_equal OK [[redis_client] auth pw x]
        r acl setuser pw nopass
        assert_equal {on nopass} [field [r acl getuser pw] flags]
        assert_equal {} [field [r acl getuser pw] passwords]
        set c [redis_client]
        assert_equal OK [$c auth pw anything]
        r acl setuser pw >x
        assert_equal {on} [field [r acl getuser pw] flags]
        r acl setuser pw resetpass
        assert_error $::WRONGPASS {$c auth pw x}
        r acl deluser pw
    }

    test {Password rule errors} {
        acl_clean
        assert_error {ERR Error in ACL SETUSER modifier '<nope': The password you are trying to remove from the user does not exist} \
            {r acl setuser pw <nope}
        assert_error {ERR Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters} \
            {r acl setuser pw #abc}
        assert_error {ERR Error in ACL SETUSER modifier '#2D711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881': The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters} \
            {r acl setuser pw #2D711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881}
        assert_error {ERR Error in ACL SETUSER modifier '!zz': The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters} \
            {r acl setuser pw !zz}
        # Nothing was created by the failing calls.
        assert_equal {default} [r acl users]
    }

    # --- Rule syntax and errors --------------------------------------------------------------

    test {SETUSER rule errors name the rule} {
        acl_clean
        assert_error {ERR Error in ACL SETUSER modifier 'badrule': Syntax error} {r acl setuser u badrule}
        assert_error {ERR Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL} {r acl setuser u +nosuch}
        assert_error {ERR Error in ACL SETUSER modifier '-nosuch': Unknown command or category name in ACL} {r acl setuser u -nosuch}
        assert_error {ERR Error in ACL SETUSER modifier '+@nosuch': Unknown command or category name in ACL} {r acl setuser u +@nosuch}
        assert_error {ERR Error in ACL SETUSER modifier '+config|nosuch': Unknown command or category name in ACL} {r acl setuser u +config|nosuch}
        assert_error {ERR Error in ACL SETUSER modifier '+config|get|x': Allowing first-arg of a subcommand is not supported} {r acl setuser u +config|get|x}
        assert_error {ERR Error in ACL SETUSER modifier '+get|': Syntax error} {r acl setuser u +get|}
        assert_error {ERR Error in ACL SETUSER modifier '%X~a': Syntax error} {r acl setuser u %X~a}
        assert_error {ERR Error in ACL SETUSER modifier '%~a': Syntax error} {r acl setuser u %~a}
        assert_error {ERR Error in ACL SETUSER modifier '%RR~a': Syntax error} {r acl setuser u %RR~a}
        assert_error {ERR Error in ACL SETUSER modifier '~a': Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns} \
            {r acl setuser u allkeys ~a}
        assert_error {ERR Error in ACL SETUSER modifier '&b': Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels} \
            {r acl setuser u &* &b}
        assert_error {ERR Usernames can't contain spaces or null characters} {r acl setuser "a b"}
        assert_error {ERR Unmatched parenthesis in acl selector starting at '(+get'.} {r acl setuser u on (+get ~x}
        assert_error {ERR Error in ACL SETUSER modifier '(badrule)': Syntax error} {r acl setuser u (badrule)}
        assert_equal {default} [r acl users]
    }

    test {A failing SETUSER changes nothing} {
        acl_clean
        r acl setuser keep on >pw ~a* +get
        set before [r acl list]
        assert_error {*Syntax error*} {r acl setuser keep off resetpass ~b* +set badrule}
        assert_equal $before [r acl list]
        r acl deluser keep
    }

    test {Rule descriptions: categories, commands, subcommands, first-args} {
        acl_clean
        foreach {rules expected} {
            {}                               {-@all}
            {+@all}                          {+@all}
            {+@all -@all +@all}              {+@all}
            {allcommands nocommands +get}    {-@all +get}
            {+@read +@write}                 {-@all +@write +@read}
            {+@all -@dangerous}              {+@all -@dangerous}
            {+@all -get}                     {+@all -get}
            {-@all +@hash -hset}             {-@all +@hash -hset}
            {+config}                        {-@all +config}
            {+config -config|set}            {-@all +config -config|set}
            {+config|get}                    {-@all +config|get}
            {-select +select|0 +select|1}    {-@all +select|0 +select|1}
            {+select|0 +select}              {-@all +select}
            {+select|0 -select}              {-@all}
            {+@all -select +select|0}        {+@all -select +select|0}
            {+GET}                           {-@all +get}
            {+@ALL}                          {+@all}
        } {
            r acl setuser d reset {*}$rules
            assert_equal $expected [field [r acl getuser d] commands] "rules: $rules"
            assert_equal "user d off sanitize-payload resetchannels $expected" [acl_list_user d] "rules: $rules"
        }
        r acl deluser d
    }

    test {Key and channel pattern descriptions} {
        acl_clean
        foreach {rules keys channels} {
            {~a ~a %R~b}            {~a %R~b}      {}
            {%R~a %W~a}             {~a}           {}
            {%W~a %R~a}             {~a}           {}
            {%wr~A}                 {~A}           {}
            {%R~* %W~*}             {~*}           {}
            {allkeys}               {~*}           {}
            {~a resetkeys ~b}       {~b}           {}
            {%R}                    {%R~}          {}
            {&a &a &b*}             {}             {&a &b*}
            {&a resetchannels &c}   {}             {&c}
            {allchannels}           {}             {&*}
        } {
            r acl setuser k reset {*}$rules
            set u [r acl getuser k]
            assert_equal $keys [field $u keys] "rules: $rules"
            assert_equal $channels [field $u channels] "rules: $rules"
        }
        r acl setuser k reset ~a %R~b %W~c &x &y
        assert_equal {user k off sanitize-payload ~a %R~b %W~c resetchannels &x &y -@all} [acl_list_user k]
        r acl deluser k
    }

    test {User flags: on/off, nopass, sanitize-payload, reset} {
        acl_clean
        r acl setuser f on nopass skip-sanitize-payload
        assert_equal {on nopass skip-sanitize-payload} [field [r acl getuser f] flags]
        r acl setuser f sanitize-payload off
        assert_equal {off nopass sanitize-payload} [field [r acl getuser f] flags]
        r acl setuser f on >p ~* &* +@all "(+get ~k)"
        r acl setuser f reset
        assert_equal {flags {off sanitize-payload} passwords {} commands -@all keys {} channels {} selectors {}} \
            [r acl getuser f]
        r acl deluser f
    }

    test {Empty rules are no-ops} {
        acl_clean
        r acl setuser e "" on ""
        assert_equal {user e on resetchannels -@all} [acl_list_user e]
        r acl deluser e
    }

    # --- Selectors -------------------------------------------------------------------------------

    test {Selectors in SETUSER, GETUSER and LIST} {
        acl_clean
        r acl setuser s on nopass "(+get ~x*)" (~y* &c +@hash) ( +set )
        assert_equal {user s on nopass resetchannels -@all (~x* resetchannels -@all +get) (~y* resetchannels &c -@all +@hash) (resetchannels -@all +set)} \
            [acl_list_user s]
        set sel [field [r acl getuser s] selectors]
        assert_equal 3 [llength $sel]
        assert_equal {commands {-@all +get} keys ~x* channels {}} [lindex $sel 0]
        assert_equal {commands {-@all +@hash} keys ~y* channels &c} [lindex $sel 1]
        r acl setuser s clearselectors
        assert_equal {user s on nopass resetchannels -@all} [acl_list_user s]
        r acl deluser s
    }

    test {A call is allowed when any selector allows it} {
        acl_clean
        r acl setuser s on >p ~root* +get "(~sel* +set)"
        set c [acl_client s p]
        r set root1 a
        assert_equal a [$c get root1]
        assert_equal OK [$c set sel1 b]
        # GET of a selector key: the root denies the key, the selector the command.
        assert_error $::NOPERM_KEY {$c get sel1}
        assert_error [format $::NOPERM_CMD del] {$c del root1}
        assert_error $::NOPERM_KEY {$c set root1 x}
        r acl deluser s
    }

    # --- Permissions -----------------------------------------------------------------------------

    test {NOPERM for a command, a subcommand, keys and channels} {
        acl_clean
        r acl setuser alice on >p1 ~foo* &ch* +@read -get +set +config|get +publish +subscribe +psubscribe +acl|whoami
        set c [acl_client alice p1]
        assert_equal alice [$c acl whoami]
        assert_error [format $::NOPERM_CMD get] {$c get foo}
        assert_error [format $::NOPERM_CMD config|set] {$c config set maxclients 10}
        assert_error [format $::NOPERM_CMD acl|list] {$c acl list}
        assert_error [format $::NOPERM_CMD del] {$c del foo}
        assert_equal {} [$c config get nosuchparam]
        assert_equal OK [$c set foo1 bar]
        assert_equal 3 [$c strlen foo1]
        assert_error $::NOPERM_KEY {$c set other bar}
        assert_error $::NOPERM_KEY {$c mget foo1 other}
        assert_equal 0 [$c publish ch1 hello]
        assert_error $::NOPERM_CHAN {$c publish other hello}
        # PSUBSCRIBE patterns must be listed literally.
        assert_error $::NOPERM_CHAN {$c psubscribe ch1*}
        assert_error $::NOPERM_CHAN {$c subscribe ch1 other}
        r acl deluser alice
    }

    test {Commands that need no authentication are always allowed} {
        acl_clean
        r acl setuser none on >p -@all
        set c [acl_client none p]
        assert_error [format $::NOPERM_CMD ping] {$c ping}
        assert_equal OK [$c auth none p]
        assert_equal 2 [dict get [kv [$c hello]] proto]
        r acl deluser none
    }

    test {Read and write key permissions (%R~ %W~)} {
        acl_clean
        r acl setuser rw on >p +@all %R~r* %W~w* ~rw*
        r set r1 a
        r set w1 b
        set c [acl_client rw p]
        assert_equal a [$c get r1]
        assert_error $::NOPERM_KEY {$c set r1 x}
        assert_error $::NOPERM_KEY {$c append r1 x}
        assert_equal OK [$c set w1 x]
        assert_error $::NOPERM_KEY {$c get w1}
        # DEL only deletes: write access is enough.
        assert_equal 1 [$c del w1]
        # COPY reads its source and writes its destination.
        assert_equal 1 [$c copy r1 w2]
        assert_error $::NOPERM_KEY {$c copy w2 r2}
        assert_equal OK [$c set rw1 v]
        assert_equal v [$c getset rw1 v2]
        assert_error $::NOPERM_KEY {$c getset w2 z}
        r acl deluser rw
    }

    test {First-arg rules (+select|0)} {
        acl_clean
        r acl setuser fa on >p +@all -select +select|0
        set c [acl_client fa p]
        assert_equal OK [$c select 0]
        assert_error [format $::NOPERM_CMD select] {$c select 1}
        r acl deluser fa
    }

    test {Existing connections of a user turned off keep working} {
        acl_clean
        r acl setuser o on >p +@all ~*
        set c [acl_client o p]
        r acl setuser o off
        assert_equal PONG [$c ping]
        assert_error $::WRONGPASS {[redis_client] auth o p}
        r acl deluser o
    }

    test {Changed rules apply to authenticated connections at once} {
        acl_clean
        r acl setuser ch on >p +@all ~*
        set c [acl_client ch p]
        assert_equal PONG [$c ping]
        r acl setuser ch -ping
        assert_error [format $::NOPERM_CMD ping] {$c ping}
        r acl deluser ch
    }

    test {ACL DELUSER disconnects the user's clients} {
        acl_clean
        r acl setuser gone on >p +@all ~*
        set c [acl_client gone p]
        set c2 [acl_client gone p]
        assert_equal PONG [$c ping]
        assert_equal 1 [r acl deluser gone]
        assert_equal 1 [$c wait_closed 2000]
        assert_equal 1 [$c2 wait_closed 2000]
    }

    test {ACL DELUSER of your own user replies, then closes} {
        acl_clean
        r acl setuser self on >p +@all ~*
        set c [acl_client self p]
        assert_equal 1 [$c acl deluser self]
        assert_equal 1 [$c wait_closed 2000]
    }

    test {The default user cannot be deleted} {
        acl_clean
        assert_error {ERR The 'default' user cannot be removed} {r acl deluser nosuch default}
    }

    test {Subscribers are disconnected when a channel is revoked} {
        acl_clean
        r acl setuser sub on >p +@all ~* &news &sport
        set c [acl_client sub p]
        $c subscribe sport
        # Adding channels or keeping the same ones does not disconnect.
        r acl setuser sub &extra
        assert_equal PONG [r ping]
        assert_equal {pong {}} [$c ping]
        r acl setuser sub resetchannels &news
        assert_equal 1 [$c wait_closed 2000]
        r acl deluser sub
    }

    test {Subscribers stay when given allchannels} {
        acl_clean
        r acl setuser sub2 on >p +@all ~* &news
        set c [acl_client sub2 p]
        $c subscribe news
        r acl setuser sub2 allchannels
        assert_equal {pong {}} [$c ping]
        r acl deluser sub2
    }

    # --- MULTI/EXEC ------------------------------------------------------------------------------

    test {A denied command inside MULTI aborts the transaction} {
        acl_clean
        r acl setuser m on >p +@all -get ~*
        set c [acl_client m p]
        assert_equal OK [$c multi]
        assert_error [format $::NOPERM_CMD get] {$c get x}
        assert_equal QUEUED [$c set x 1]
        assert_error {EXECABORT Transaction discarded because of previous errors.} {$c exec}
        r acl deluser m
    }

    test {A denied EXEC discards the transaction} {
        acl_clean
        r acl setuser m2 on >p +@all -exec ~*
        set c [acl_client m2 p]
        $c multi
        $c set x 1
        assert_error "EXECABORT Transaction discarded because of: [format $::NOPERM_CMD exec]" {$c exec}
        # The transaction is gone: MULTI is not nested.
        assert_equal OK [$c multi]
        r acl deluser m2
    }

    test {Rules changed between MULTI and EXEC are applied at EXEC} {
        acl_clean
        r acl setuser m3 on >p +@all ~*
        set c [acl_client m3 p]
        r del mx
        $c multi
        $c set mx 1
        $c incr mx
        $c ping
        r acl setuser m3 resetkeys ~other -ping
        set res [$c exec]
        assert_equal 3 [llength $res]
        assert_equal {NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: no permission to touch the specified keys} \
            [lindex $res 0]
        assert_equal {NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: no permission to execute the command or subcommand} \
            [lindex $res 2]
        assert_equal 0 [r exists mx]
        set e [lindex [acl_log_stable 1] 0]
        assert_equal multi [dict get $e context]
        r acl deluser m3
    }

    test {EXEC without authentication aborts} {
        acl_clean
        r config set requirepass secret
        set c [redis_client]
        assert_error {EXECABORT Transaction discarded because of: NOAUTH Authentication required.} {$c exec}
        r config set requirepass ""
    }

    # --- ACL LOG ---------------------------------------------------------------------------------

    test {ACL LOG records denials with Redis's fields} {
        acl_clean
        r acl log reset
        r acl setuser lg on >p ~k* &c* +get +publish
        set c [acl_client lg p]
        catch {$c set k1 v}
        catch {$c get other}
        catch {$c publish nope m}
        set log [r acl log]
        assert_equal 3 [llength $log]
        assert_equal {count reason context object username age-seconds client-info} [dict keys [kv [lindex $log 0]]]
        assert_equal {count 1 reason channel context toplevel object nope username lg} [lindex [acl_log_stable] 0]
        assert_equal {count 1 reason key context toplevel object other username lg} [lindex [acl_log_stable] 1]
        assert_equal {count 1 reason command context toplevel object set username lg} [lindex [acl_log_stable] 2]
        set e [kv [lindex $log 0]]
        assert_match {id=* addr=*} [dict get $e client-info]
        assert_match {* cmd=publish user=lg *} [dict get $e client-info]
        assert_range [dict get $e age-seconds] 0 30
        r acl deluser lg
    }

    test {ACL LOG groups repeated denials and moves them first} {
        acl_clean
        r acl log reset
        r acl setuser lg on >p ~* +get
        set c [acl_client lg p]
        catch {$c set a 1}
        catch {$c del a}
        catch {$c set a 2}
        catch {$c set b 3}
        set log [acl_log_stable]
        assert_equal 2 [llength $log]
        assert_equal {count 3 reason command context toplevel object set username lg} [lindex $log 0]
        assert_equal {count 1 reason command context toplevel object del username lg} [lindex $log 1]
        r acl deluser lg
    }

    test {ACL LOG names the context of a denial: multi inside a transaction, lua inside a script} {
        acl_clean
        r acl log reset
        r acl setuser lg on >p ~* +get +multi +exec +eval +fcall +function|load
        set c [acl_client lg p]
        $c multi
        catch {$c set a 1}
        catch {$c exec}
        catch {$c eval {return redis.call('set', 'a', '1')} 0}
        set log [acl_log_stable]
        assert_equal {count 1 reason command context lua object set username lg} [lindex $log 0]
        assert_equal {count 1 reason command context multi object set username lg} [lindex $log 1]
        r acl deluser lg
    }

    test {ACL LOG records failed AUTH with the given user name} {
        acl_clean
        r acl log reset
        set c [redis_client]
        catch {$c auth nosuchuser pw}
        catch {$c AUTH other pw}
        catch {$c hello 3 auth someone pw}
        assert_equal {{count 1 reason auth context toplevel object hello username someone} {count 1 reason auth context toplevel object AUTH username other} {count 1 reason auth context toplevel object auth username nosuchuser}} \
            [acl_log_stable]
    }

    test {ACL LOG context is multi for commands queued in MULTI} {
        acl_clean
        r acl log reset
        r acl setuser lg on >p ~* +@all -get
        set c [acl_client lg p]
        $c multi
        catch {$c get x}
        catch {$c exec}
        assert_equal {{count 1 reason command context multi object get username lg}} [acl_log_stable]
        r acl deluser lg
    }

    test {ACL LOG count, RESET and errors} {
        acl_clean
        r acl log reset
        set c [redis_client]
        foreach u {u1 u2 u3} {catch {$c auth $u pw}}
        assert_equal 3 [llength [r acl log]]
        assert_equal 2 [llength [r acl log 2]]
        assert_equal 0 [llength [r acl log 0]]
        assert_equal 0 [llength [r acl log -5]]
        assert_equal u3 [dict get [lindex [acl_log_stable 1] 0] username]
        assert_error {ERR value is not an integer or out of range} {r acl log x}
        assert_error {ERR unknown subcommand or wrong number of arguments for 'log'. Try ACL HELP.} {r acl log 1 2}
        assert_equal OK [r acl log reset]
        assert_equal {} [r acl log]
    }

    test {acllog-max-len trims the log} {
        acl_clean
        r acl log reset
        r config set acllog-max-len 2
        set c [redis_client]
        foreach u {u1 u2 u3 u4} {catch {$c auth $u pw}}
        assert_equal {u4 u3} [lmap e [acl_log_stable] {dict get $e username}]
        r config set acllog-max-len 128
        assert_equal 128 [lindex [r config get acllog-max-len] 1]
    }

    # --- DRYRUN, CAT, GENPASS, HELP ----------------------------------------------------------

    test {ACL DRYRUN} {
        acl_clean
        r acl setuser dry on >p ~k* &c* +@read -strlen +set +publish
        assert_equal OK [r acl dryrun dry get k1]
        assert_equal {This user has no permissions to run the 'strlen' command} [r acl dryrun dry strlen k1]
        assert_equal {This user has no permissions to access the 'x' key} [r acl dryrun dry set x 1]
        assert_equal {This user has no permissions to access the 'other' channel} [r acl dryrun dry publish other m]
        assert_equal {This user has no permissions to run the 'config|get' command} [r acl dryrun dry config get maxclients]
        assert_error {ERR User 'nobody' not found} {r acl dryrun nobody get x}
        assert_error {ERR Command 'nosuchcmd' not found} {r acl dryrun dry nosuchcmd}
        assert_error {ERR wrong number of arguments for 'get' command} {r acl dryrun dry get}
        # Dry runs are not logged.
        r acl log reset
        r acl dryrun dry set x 1
        assert_equal {} [r acl log]
        r acl deluser dry
    }

    test {ACL CAT} {
        acl_clean
        assert_equal {keyspace read write set sortedset list hash string bitmap hyperloglog geo stream pubsub admin fast slow blocking dangerous connection transaction scripting} [r acl cat]
        set read [r acl cat read]
        assert {[lsearch $read get] >= 0}
        assert {[lsearch $read set] < 0}
        assert {[lsearch [r acl cat WRITE] set] >= 0}
        assert {[lsearch [r acl cat admin] config|set] >= 0}
        assert_error {ERR Unknown category 'nosuch'} {r acl cat nosuch}
    }

    test {ACL GENPASS} {
        acl_clean
        set p [r acl genpass]
        assert_equal 64 [string length $p]
        assert {[regexp {^[0-9a-f]+$} $p]}
        assert_not_equal $p [r acl genpass]
        assert_equal 2 [string length [r acl genpass 5]]
        assert_equal 1 [string length [r acl genpass 1]]
        assert_equal 1024 [string length [r acl genpass 4096]]
        assert_error {ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096} {r acl genpass 0}
        assert_error {ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096} {r acl genpass 4097}
        assert_error {ERR value is not an integer or out of range} {r acl genpass x}
    }

    test {ACL HELP and bad subcommands} {
        acl_clean
        set h [r acl help]
        assert_equal {ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:} [lindex $h 0]
        assert_equal {    Prints this help.} [lindex $h end]
        assert_equal 29 [llength $h]
        assert_error {ERR unknown subcommand 'nosuch'. Try ACL HELP.} {r acl nosuch}
        assert_error {ERR wrong number of arguments for 'acl|list' command} {r acl list x}
        assert_error {ERR wrong number of arguments for 'acl|setuser' command} {r acl setuser}
    }

    test {ACL SAVE and LOAD need an aclfile} {
        acl_clean
        set err {ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.}
        assert_error $err {r acl save}
        assert_error $err {r acl load}
    }

    # --- requirepass, AUTH, HELLO, RESET, CLIENT --------------------------------------------------

    test {requirepass is the default user's password} {
        acl_clean
        r config set requirepass foo
        assert_equal {{user default on #2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae ~* &* +@all}} [r acl list]
        assert_equal foo [lindex [r config get requirepass] 1]
        set c [redis_client]
        assert_error {NOAUTH Authentication required.} {$c get x}
        assert_equal OK [$c auth foo]
        assert_equal OK [$c auth default foo]
        r config set requirepass ""
        assert_equal {{user default on nopass ~* &* +@all}} [r acl list]
    }

    test {A default user with a password set by ACL SETUSER requires AUTH} {
        acl_clean
        r acl setuser default resetpass >pw
        set c [redis_client]
        assert_error {NOAUTH Authentication required.} {$c ping}
        assert_error $::WRONGPASS {$c auth x}
        assert_equal OK [$c auth pw]
        r acl setuser default nopass
        assert_equal PONG [[redis_client] ping]
    }

    test {A disabled default user requires authentication as another user} {
        acl_clean
        r acl setuser admin on >adm +@all ~* &*
        r acl setuser default off
        set c [redis_client]
        assert_error {NOAUTH Authentication required.} {$c ping}
        assert_error $::WRONGPASS {$c auth default x}
        assert_equal OK [$c auth admin adm]
        assert_equal PONG [$c ping]
        $c acl setuser default on
        r acl deluser admin
    }

    test {HELLO AUTH with an ACL user} {
        acl_clean
        r acl setuser h on >hp +@all ~*
        set c [redis_client]
        set d [kv [$c hello 3 auth h hp]]
        assert_equal 3 [dict get $d proto]
        assert_equal h [$c acl whoami]
        assert_error $::WRONGPASS {$c hello 3 auth h wrong}
        # A failed HELLO AUTH keeps the previous user.
        assert_equal h [$c acl whoami]
        r acl deluser h
    }

    test {RESET returns to the default user} {
        acl_clean
        r acl setuser rs on >p +@all ~*
        set c [acl_client rs p]
        assert_equal rs [$c acl whoami]
        assert_equal RESET [$c reset]
        assert_equal default [$c acl whoami]
        r acl deluser rs
    }

    test {Credentials are redacted in SLOWLOG} {
        acl_clean
        r config set slowlog-log-slower-than 0
        r slowlog reset
        r acl setuser red on >secret +@all ~*
        set c [redis_client]
        $c auth red secret
        catch {$c auth wrong}
        $c hello 2 auth red secret
        r config set slowlog-log-slower-than 10000
        set args {}
        foreach e [r slowlog get 10] {lappend args [lindex $e 3]}
        assert {[lsearch -exact $args {hello 2 auth (redacted) (redacted)}] >= 0}
        assert {[lsearch -exact $args {auth (redacted)}] >= 0}
        assert {[lsearch -exact $args {auth (redacted) (redacted)}] >= 0}
        assert {[lsearch -exact $args {acl setuser (redacted) (redacted) (redacted) (redacted) (redacted)}] >= 0}
        assert_no_match {*secret*} $args
        r acl deluser red
    }

    test {CLIENT LIST shows the user; CLIENT KILL USER} {
        acl_clean
        r acl setuser cl on >p +@all ~*
        set c [acl_client cl p]
        $c client setname clnamed
        set line ""
        foreach l [split [r client list] "\n"] {
            if {[string match {*name=clnamed *} $l]} {set line $l}
        }
        assert_match {* user=cl *} $line
        assert_match {* user=default *} [r client info]
        assert_error {ERR No such user 'nosuch'} {r client kill user nosuch}
        assert_equal 1 [r client kill user cl]
        assert_equal 1 [$c wait_closed 2000]
        r acl deluser cl
    }
}

# --- aclfile ----------------------------------------------------------------------------------------

set aclpath [file normalize [file join $::srv::tmproot "acl-test-[pid].acl"]]
set fd [open $aclpath w]
puts $fd "user alice on #2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 ~a* +get"
puts $fd ""
puts $fd "user default on nopass ~* &* +@all"
close $fd

start_server [list tags {acl aclfile} overrides [list aclfile $aclpath]] {
    test {Users are loaded from the aclfile at start-up} {
        assert_equal {{user alice on #2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 ~a* resetchannels -@all +get} {user default on nopass ~* &* +@all}} \
            [r acl list]
        set c [acl_client alice x]
        assert_equal {} [$c get a1]
        assert_equal $aclpath [lindex [r config get aclfile] 1]
        assert_error {*can't set immutable config*} {r config set aclfile /tmp/x}
    }

    test {ACL SAVE writes the users; ACL LOAD reads them back} {
        r acl setuser bob on >b ~b* +@hash
        assert_equal OK [r acl save]
        set fd [open $aclpath r]
        set text [read $fd]
        close $fd
        assert_equal "user alice on #2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 ~a* resetchannels -@all +get\nuser bob on #3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d ~b* resetchannels -@all +@hash\nuser default on nopass ~* &* +@all\n" $text
        r acl deluser bob
        assert_equal {alice default} [r acl users]
        assert_equal OK [r acl load]
        assert_equal {alice bob default} [r acl users]
    }

    test {ACL LOAD disconnects the clients of the replaced users} {
        set c [acl_client alice x]
        set d [redis_client]
        assert_equal OK [r acl load]
        assert_equal 1 [$c wait_closed 2000]
        assert_equal PONG [$d ping]
    }

    test {ACL LOAD with errors changes nothing} {
        set before [r acl list]
        set fd [open $aclpath w]
        puts $fd "user carol on >c ~* +@all"
        puts $fd "user dave on badrule"
        puts $fd "nouser x"
        puts $fd "user carol on"
        puts $fd "user erin (+get"
        close $fd
        set err ""
        catch {r acl load} err
        assert_equal "ERR $aclpath:2: Syntax error. $aclpath:3 should start with user keyword followed by the username. WARNING: Duplicate user 'carol' found on line 4. $aclpath:5: Unmatched parenthesis in selector definition.WARNING: ACL errors detected, no change to the previously active ACL rules was performed" $err
        assert_equal $before [r acl list]
    }

    test {ACL LOAD without a default user line resets the default user} {
        r acl setuser default -debug
        set fd [open $aclpath w]
        puts $fd "user zoe on nopass +@all ~*"
        close $fd
        assert_equal OK [r acl load]
        assert_equal {{user default on nopass ~* &* +@all} {user zoe on nopass ~* resetchannels +@all}} [r acl list]
    }

    test {ACL LOAD of a missing file} {
        file delete $aclpath
        catch {r acl load} err
        assert_match "ERR Error loading ACLs, opening file '$aclpath': No such file or directory*" $err
    }
}

set fd [open $aclpath w]
puts $fd "user alice on badrule"
close $fd

tags {acl} {
    test {A broken aclfile stops the server at start-up} {
        set dir [file join $::srv::tmproot "aclstart-[pid]"]
        file mkdir $dir
        set res [run_server_binary [list --port [::srv::free_port] --bind 127.0.0.1 --dir $dir --save "" --aclfile $aclpath] 10000]
        assert_not_equal 0 [lindex $res 0]
        assert_match {*ACL errors*Syntax error*} [lindex $res 1]
        file delete -force $dir
    }
}
file delete $aclpath

# (Hashes, not ">pass": the harness starts servers with Tcl's exec, which
# would take ">pa" for a redirection.)
start_server {tags {acl} args {--user alice on #9513229d435978263d82902c59d4e0fb86c941a9bf09b605cd8a6643f40149a8 ~a* +@string --user bob on nopass ~* +@all}} {
    test {"user" directives define users at start-up} {
        assert_equal {user alice on #9513229d435978263d82902c59d4e0fb86c941a9bf09b605cd8a6643f40149a8 ~a* resetchannels -@all +@string} \
            [lindex [r acl list] 0]
        assert_equal {user bob on nopass ~* resetchannels +@all} [lindex [r acl list] 1]
        set c [acl_client alice pa]
        assert_equal OK [$c set a1 v]
        assert_error $::NOPERM_KEY {$c set b1 v}
    }
}
