# Geo commands: GEOADD (NX/XX/CH), GEOPOS, GEOHASH, GEODIST, GEORADIUS,
# GEORADIUSBYMEMBER and their _RO forms, GEOSEARCH and GEOSEARCHSTORE.
# Exact scores, coordinates, hashes and distances (RESP2 and RESP3 bytes),
# every error string, the STORE forms, notifications, WATCH, ACL key
# permissions, COMMAND GETKEYS and what the AOF gets, and randomized
# searches checked against a brute-force scan of all points in Tcl.

set WRONGTYPE {WRONGTYPE Operation against a key holding the wrong kind of value}

# ---- a Tcl model of the geo math ------------------------------------------
#
# The same formulas, in the same order of operations, as the server's
# (haversine on a sphere of 6372797.560856 m), so distances computed here
# from the positions GEOPOS reports agree with the server's to the bit,
# except where GEOPOS's 17 decimals do not round-trip (coordinates within
# about 1e-3 of 0); the checks below allow for that near the boundary.

set ::geo_d2r [expr {3.141592653589793 / 180.0}]
proc geo_rad {deg} { expr {$deg * $::geo_d2r} }
proc geo_lat_dist {lat1 lat2} {
    expr {6372797.560856 * abs([geo_rad $lat2] - [geo_rad $lat1])}
}
proc geo_dist {lon1 lat1 lon2 lat2} {
    set v [expr {sin(([geo_rad $lon2] - [geo_rad $lon1]) / 2)}]
    if {$v == 0.0} {return [geo_lat_dist $lat1 $lat2]}
    set lat1r [geo_rad $lat1]
    set lat2r [geo_rad $lat2]
    set u [expr {sin(($lat2r - $lat1r) / 2)}]
    set a [expr {$u * $u + cos($lat1r) * cos($lat2r) * $v * $v}]
    expr {2.0 * 6372797.560856 * asin(sqrt($a))}
}
# The server's box test: centre (clon, clat), sizes in meters.
proc geo_in_box {w_m h_m clon clat lon lat} {
    if {[geo_lat_dist $lat $clat] > $h_m / 2} {return 0}
    if {[geo_dist $lon $lat $clon $lat] > $w_m / 2} {return 0}
    return 1
}
proc geo_random_point {} {
    list [expr {-180 + rand() * 360}] [expr {-70 + rand() * 140}]
}

# {member {lon lat}} of every member, from one GEOPOS call.
proc geo_positions {key members} {
    set out {}
    foreach m $members p [r geopos $key {*}$members] {dict set out $m $p}
    return $out
}

# Standard geohash decoding (base32, latitude over +-90): {lonmin lonmax
# latmin latmax} of the cell a hash string names.
proc geohash_cell {s} {
    set alphabet 0123456789bcdefghjkmnpqrstuvwxyz
    set lon {-180.0 180.0}
    set lat {-90.0 90.0}
    set even 1
    foreach ch [split $s ""] {
        set v [string first $ch $alphabet]
        if {$v < 0} {error "not a geohash character: $ch"}
        for {set b 4} {$b >= 0} {incr b -1} {
            set bit [expr {($v >> $b) & 1}]
            if {$even} {upvar 0 lon rng} else {upvar 0 lat rng}
            lassign $rng lo hi
            set mid [expr {($lo + $hi) / 2}]
            set rng [expr {$bit ? [list $mid $hi] : [list $lo $mid]}]
            set even [expr {!$even}]
        }
    }
    concat $lon $lat
}

# Eight European landmarks (GEOADD order: lon lat member).
set ::eu_points {
    2.2944813 48.8583701 eiffel
    12.4922309 41.8902102 colosseum
    23.7257492 37.9715323 acropolis
    2.1743558 41.4036299 sagrada
    -0.1246254 51.5007292 bigben
    13.3777041 52.5162746 brandenburg
    -9.1393366 38.7222524 lisbon
    4.8951679 52.3702157 dam
}
proc geo_load_eu {{key eu}} {
    r del $key
    r geoadd $key {*}$::eu_points
}

start_server {tags {geo}} {

    # ---- GEOADD -----------------------------------------------------------

    test {GEOADD adds, updates and counts like ZADD} {
        r del g
        assert_equal 2 [r geoadd g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania]
        assert_equal 0 [r geoadd g 13.361389 38.115556 Palermo]
        assert_equal zset [r type g]
        assert_equal 2 [r zcard g]
        # A move is an update: not counted without CH.
        assert_equal 0 [r geoadd g 13.4 38.2 Palermo]
        assert_equal 1 [r geoadd g CH 13.361389 38.115556 Palermo]
        # CH counts additions too.
        assert_equal 2 [r geoadd g ch 13.361389 38.115556 Palermo 1 1 a 2 2 b]
        assert_equal 4 [r zcard g]
    }

    test {GEOADD NX and XX} {
        r del g
        r geoadd g 10 10 a
        set score [r zscore g a]
        assert_equal 0 [r geoadd g NX 20 20 a]
        assert_equal $score [r zscore g a]
        assert_equal 1 [r geoadd g nx 20 20 b]
        assert_equal 0 [r geoadd g XX 30 30 a 40 40 c]
        assert_not_equal $score [r zscore g a]
        assert_equal {} [r zscore g c]
        assert_equal 1 [r geoadd g XX CH 31 31 a 40 40 c]
        assert_equal 0 [r geoadd g CH NX 32 32 a]
        # XX on a missing key creates nothing.
        r del nokey
        assert_equal 0 [r geoadd nokey XX 1 1 a]
        assert_equal 0 [r exists nokey]
    }

    test {GEOADD syntax errors} {
        r del g
        assert_error {ERR syntax error} {r geoadd g NX XX 1 1 a}
        assert_error {ERR syntax error} {r geoadd g xx nx 1 1 a}
        assert_error {ERR syntax error} {r geoadd g CH XX foo 1 1 a}
        assert_error {ERR syntax error} {r geoadd g 1 1 a 2}
        assert_error {ERR syntax error} {r geoadd g 1 1 a 2 2}
        assert_error {ERR syntax error} {r geoadd g NX CH CH}
        # GT and LT are ZADD's, not GEOADD's: GT is read as a longitude.
        assert_error {ERR syntax error} {r geoadd g GT 1 1 a}
        assert_error {ERR value is not a valid float} {r geoadd g GT 1 1}
        assert_error {ERR wrong number of arguments for 'geoadd' command} {r geoadd g 1 1}
        assert_equal 0 [r exists g]
    }

    test {GEOADD rejects positions outside the Mercator limits} {
        r del g
        assert_error {ERR invalid longitude,latitude pair 180.000001,0.000000} {r geoadd g 180.000001 0 a}
        assert_error {ERR invalid longitude,latitude pair -181.000000,10.000000} {r geoadd g -181 10 a}
        assert_error {ERR invalid longitude,latitude pair 10.000000,85.051130} {r geoadd g 10 85.05113 a}
        assert_error {ERR invalid longitude,latitude pair 10.000000,-86.000000} {r geoadd g 10 -86 a}
        assert_error {ERR invalid longitude,latitude pair inf,0.000000} {r geoadd g inf 0 a}
        assert_error {ERR invalid longitude,latitude pair 0.000000,-inf} {r geoadd g 0 -inf a}
        # Both numbers are parsed before the range is checked.
        assert_error {ERR value is not a valid float} {r geoadd g 1000 abc a}
        assert_error {ERR value is not a valid float} {r geoadd g abc 1000 a}
        assert_error {ERR value is not a valid float} {r geoadd g nan 0 a}
        assert_error {ERR value is not a valid float} {r geoadd g " 1" 0 a}
        assert_error {ERR value is not a valid float} {r geoadd g "" 0 a}
        # The limits themselves are fine.
        assert_equal 4 [r geoadd g 180 85.05112878 ne -180 -85.05112878 sw 180 -85.05112878 se -180 85.05112878 nw]
    }

    test {GEOADD checks every position before writing anything} {
        r del g
        r geoadd g 1 1 a
        assert_error {ERR invalid*} {r geoadd g 2 2 b 3 3 c 500 1 d}
        assert_error {ERR value is not a valid float} {r geoadd g 2 2 b x 3 c}
        assert_equal {a} [r zrange g 0 -1]
    }

    test {GEOADD against a key of another type} {
        r set str x
        assert_error $WRONGTYPE {r geoadd str 1 1 a}
        # Position errors come before the type check.
        assert_error {ERR invalid*} {r geoadd str 1000 1 a}
        assert_equal x [r get str]
    }

    test {GEOADD stores 52-bit geohashes as scores} {
        geo_load_eu
        assert_equal {lisbon 1966377783324484 bigben 2163557700952384 sagrada 3471609415235411 colosseum 3480343077245765 acropolis 3505356545315408 eiffel 3663832614286749 dam 3665667490693366 brandenburg 3673983823275668} [r zrange eu 0 -1 withscores]
        r del g
        r geoadd g 0 0 zero -180 -85.05112878 min 180 85.05112878 max 13.361389 38.115556 Palermo
        # The upper corner has index 2^26 on both axes (bits 52 and 53).
        assert_equal {min 0 zero 3377699720527872 Palermo 3479099956230698 max 13510798882111488} [r zrange g 0 -1 withscores]
    }

    test {A geo set is a zset: encodings follow the zset limits} {
        r del g
        r geoadd g 1 1 a 2 2 b
        assert_encoding listpack g
        set args {}
        for {set i 0} {$i < 200} {incr i} {lappend args [expr {$i * 0.5}] [expr {$i * 0.25}] m$i}
        r geoadd g {*}$args
        assert_encoding skiplist g
        assert_equal 202 [r zcard g]
        r del g
        r geoadd g 1 1 [string repeat x 100]
        assert_encoding skiplist g
    }

    # ---- GEOPOS / GEOHASH / GEODIST -----------------------------------------

    test {GEOPOS prints each coordinate with 17 decimals, trailing zeros dropped} {
        geo_load_eu
        assert_equal {{2.29448229074478149 48.85837130043967136} {-0.12462347745895386 51.50072939380996218} {} {-9.13933485746383667 38.72225204386871411}} [r geopos eu eiffel bigben nosuch lisbon]
        assert_equal "*2\r\n*2\r\n\$19\r\n2.29448229074478149\r\n\$20\r\n48.85837130043967136\r\n*-1\r\n" [r rawcall geopos eu eiffel nosuch]
        r del g
        r geoadd g 180 85.05112878 max 0 0 zero
        assert_equal {{180 85.0511287799999991} {0.00000268220901489 0.00000126736058093}} [r geopos g max zero]
    }

    test {GEOPOS in RESP3: doubles and nulls} {
        geo_load_eu
        set c [redis_client]
        $c hello 3
        assert_equal "*2\r\n*2\r\n,2.29448229074478149\r\n,48.85837130043967136\r\n_\r\n" [$c rawcall geopos eu eiffel nosuch]
        assert_equal "*1\r\n_\r\n" [$c rawcall geopos nokey a]
        $c close
    }

    test {GEOPOS and GEOHASH on a missing key: one null per member} {
        r del nokey
        assert_equal "*2\r\n*-1\r\n*-1\r\n" [r rawcall geopos nokey a b]
        assert_equal "*2\r\n\$-1\r\n\$-1\r\n" [r rawcall geohash nokey a b]
    }

    test {GEOPOS and GEOHASH of scores GEOADD did not write} {
        r del g
        r zadd g -1 neg 0 zero 1.5 frac inf pinf -inf ninf 9007199254740992 p53 1e300 big
        assert_equal {{180 85.0511287799999991} {-179.99999731779098511 -85.05112751263942528} {-179.99999731779098511 -85.05112497791824921} {-179.99999731779098511 -85.05112751263942528} {180 -85.05112751263942528} {180 -85.05112751263942528} {-179.99999731779098511 -85.05112751263942528}} [r geopos g neg zero frac pinf ninf p53 big]
        assert_equal {bp05b5048p0 00bh0hbj200 00bh0hbj210 00bh0hbj200} [r geohash g neg zero frac pinf]
    }

    test {GEOHASH returns standard 11-character geohashes} {
        geo_load_eu
        assert_equal {u09tunqu9k0 gcpuvpmm2p0 eycs210vqn0 sr2yk3bs4j0 {}} [r geohash eu eiffel bigben lisbon colosseum nosuch]
        r del g
        r geoadd g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania -5.6 42.6 spain
        assert_equal {sqc8b49rny0 sqdtr74hyu0 ezs42e44yx0} [r geohash g Palermo Catania spain]
        assert_equal "*1\r\n\$11\r\nsqc8b49rny0\r\n" [r rawcall geohash g Palermo]
    }

    test {GEOHASH strings name a cell holding the point (random points)} {
        r del g
        set seed [clock milliseconds]
        expr {srand($seed)}
        set args {}
        set pts {}
        for {set i 0} {$i < 300} {incr i} {
            lassign [geo_random_point] lon lat
            lappend args $lon $lat p$i
            lappend pts p$i [list $lon $lat]
        }
        r geoadd g {*}$args
        set hashes [r geohash g {*}[dict keys $pts]]
        foreach {m p} $pts h $hashes {
            lassign $p lon lat
            assert_equal 11 [string length $h] "seed $seed $m"
            assert_equal 0 [string index $h 10] "seed $seed $m"
            # 10 characters are 50 bits: a cell of about 3.4e-5 degrees.
            lassign [geohash_cell [string range $h 0 9]] lo0 lo1 la0 la1
            set eps 1e-5
            assert {$lon >= $lo0 - $eps && $lon <= $lo1 + $eps && $lat >= $la0 - $eps && $lat <= $la1 + $eps} \
                "seed $seed: $m ($lon $lat) outside $h: $lo0..$lo1 $la0..$la1"
        }
    }

    test {GEODIST in every unit, four decimals} {
        geo_load_eu
        assert_equal 340640.7823 [r geodist eu eiffel bigben]
        assert_equal 340640.7823 [r geodist eu eiffel bigben m]
        assert_equal 340.6408 [r geodist eu eiffel bigben km]
        assert_equal 340.6408 [r geodist eu eiffel bigben KM]
        assert_equal 211.6649 [r geodist eu eiffel bigben mi]
        assert_equal 1117587.8683 [r geodist eu eiffel bigben FT]
        assert_equal 0.0000 [r geodist eu eiffel eiffel]
        assert_equal 340640.7823 [r geodist eu bigben eiffel]
        r del g
        r geoadd g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania
        assert_equal 166274.1516 [r geodist g Palermo Catania]
        assert_equal "\$8\r\n166.2742\r\n" [r rawcall geodist g Palermo Catania km]
        set c [redis_client]
        $c hello 3
        # A bulk string in RESP3 too.
        assert_equal "\$8\r\n166.2742\r\n" [$c rawcall geodist g Palermo Catania km]
        assert_equal "_\r\n" [$c rawcall geodist g Palermo nosuch]
        $c close
    }

    test {GEODIST nulls and errors} {
        geo_load_eu
        r del nokey
        assert_equal "\$-1\r\n" [r rawcall geodist eu eiffel nosuch]
        assert_equal "\$-1\r\n" [r rawcall geodist eu nosuch eiffel]
        assert_equal "\$-1\r\n" [r rawcall geodist nokey a b]
        assert_error {ERR unsupported unit provided. please use M, KM, FT, MI} {r geodist eu eiffel bigben yd}
        # The unit is checked before the key.
        assert_error {ERR unsupported unit provided. please use M, KM, FT, MI} {r geodist nokey a b yd}
        assert_error {ERR syntax error} {r geodist eu eiffel bigben km x}
        assert_error {ERR wrong number of arguments for 'geodist' command} {r geodist eu eiffel}
        r set str x
        assert_error $WRONGTYPE {r geodist str a b}
        assert_error $WRONGTYPE {r geopos str a}
        assert_error $WRONGTYPE {r geohash str a}
    }

    test {GEODIST between the corners of the map} {
        r del g
        r geoadd g 180 85.05112878 max -180 -85.05112878 min 0 0 zero
        assert_equal 11756.2756 [r geodist g max min mi]
        assert_equal 34648333.0607 [r geodist g zero min ft]
    }

    # ---- searches -------------------------------------------------------------

    test {GEORADIUS, GEORADIUSBYMEMBER and GEOSEARCH: sorted results} {
        geo_load_eu
        assert_equal {eiffel bigben dam sagrada brandenburg} [r georadius eu 2.35 48.85 1000 km asc]
        assert_equal {brandenburg sagrada dam bigben eiffel} [r georadius eu 2.35 48.85 1000 km desc]
        assert_equal {{eiffel 4.1684} {bigben 343.4624} {dam 430.7186} {sagrada 828.3463} {brandenburg 876.3743} {colosseum 1106.0429} {lisbon 1452.7062}} [r georadius eu 2.35 48.85 1500 km withdist asc]
        assert_equal {eiffel bigben dam} [r georadiusbymember eu eiffel 500 km asc]
        assert_equal {eiffel bigben dam} [r georadiusbymember_ro eu eiffel 500 km asc]
        assert_equal {eiffel bigben dam} [r georadius_ro eu 2.35 48.85 500 km asc]
        assert_equal {eiffel bigben dam} [r geosearch eu frommember eiffel byradius 500 km asc]
        assert_equal {eiffel bigben dam} [r geosearch eu fromlonlat 2.35 48.85 byradius 500000 m asc]
        assert_equal {{eiffel 0.0000} {bigben 211.6649} {dam 268.1316}} [r geosearch eu frommember eiffel byradius 300 mi asc withdist]
    }

    test {Search replies: the fields come as dist, hash, coord whatever the argument order} {
        geo_load_eu
        assert_equal {{lisbon 1450.5938 1966377783324484 {-9.13933485746383667 38.72225204386871411}} {colosseum 1109.7357 3480343077245765 {12.49223023653030396 41.89020991683951678}} {brandenburg 879.3364 3673983823275668 {13.37770253419876099 52.51627556518374718}}} \
            [r georadiusbymember eu eiffel 1500 km withcoord withhash withdist desc count 3]
        assert_equal "*1\r\n*4\r\n\$6\r\neiffel\r\n\$6\r\n0.0000\r\n:3663832614286749\r\n*2\r\n\$19\r\n2.29448229074478149\r\n\$20\r\n48.85837130043967136\r\n" \
            [r rawcall geosearch eu frommember eiffel byradius 1 km withcoord withdist withhash]
        assert_equal "*1\r\n*2\r\n\$6\r\neiffel\r\n:3663832614286749\r\n" [r rawcall geosearch eu frommember eiffel byradius 1 km withhash]
        set c [redis_client]
        $c hello 3
        assert_equal "*1\r\n*4\r\n\$6\r\neiffel\r\n\$6\r\n0.0000\r\n:3663832614286749\r\n*2\r\n,2.29448229074478149\r\n,48.85837130043967136\r\n" \
            [$c rawcall geosearch eu frommember eiffel byradius 1 km withcoord withdist withhash]
        $c close
    }

    test {Searches without ASC/DESC return members in geohash cell order} {
        geo_load_eu
        set res [r georadius eu 2.35 48.85 1000 km]
        assert_equal [lsort {eiffel bigben dam sagrada brandenburg}] [lsort $res]
        # Both servers scan the same cells in the same order.
        assert_equal $res [r georadius eu 2.35 48.85 1000 km]
    }

    test {COUNT, COUNT ANY and their errors} {
        geo_load_eu
        # COUNT alone sorts ascending: the nearest come first.
        assert_equal {eiffel bigben} [r georadius eu 2.35 48.85 2000 km count 2]
        assert_equal {acropolis lisbon} [r georadius eu 2.35 48.85 5000 km count 2 desc]
        assert_equal {eiffel bigben dam sagrada brandenburg colosseum lisbon acropolis} [r georadius eu 2.35 48.85 5000 km count 100]
        # ANY stops at the first COUNT found (cell order), sorted only when asked.
        set any [r georadius eu 2.35 48.85 5000 km count 3 any]
        assert_equal 3 [llength $any]
        assert_equal [lsort -command {apply {{a b} {
            expr {[r geodist eu $a eiffel] < [r geodist eu $b eiffel] ? -1 : 1}}}} $any] \
            [r georadius eu 2.35 48.85 5000 km count 3 any asc]
        assert_error {ERR the ANY argument requires COUNT argument} {r georadius eu 2.35 48.85 10 km any}
        assert_error {ERR the ANY argument requires COUNT argument} {r geosearch eu frommember eiffel byradius 10 km any asc}
        assert_error {ERR COUNT must be > 0} {r georadius eu 2.35 48.85 10 km count 0}
        assert_error {ERR COUNT must be > 0} {r georadius eu 2.35 48.85 10 km count -5}
        assert_error {ERR value is not an integer or out of range} {r georadius eu 2.35 48.85 10 km count abc}
        assert_error {ERR value is not an integer or out of range} {r georadius eu 2.35 48.85 10 km count 1.5}
        assert_error {ERR syntax error} {r georadius eu 2.35 48.85 10 km count}
    }

    test {Search argument errors} {
        geo_load_eu
        assert_error {ERR need numeric radius} {r georadius eu 2 48 abc km}
        assert_error {ERR radius cannot be negative} {r georadius eu 2 48 -1 km}
        assert_error {ERR unsupported unit provided. please use M, KM, FT, MI} {r georadius eu 2 48 1 parsec}
        assert_error {ERR invalid longitude,latitude pair 200.000000,48.000000} {r georadius eu 200 48 1 km}
        assert_error {ERR value is not a valid float} {r georadius eu x 48 1 km}
        assert_error {ERR syntax error} {r georadius eu 2 48 1 km foo}
        assert_error {ERR syntax error} {r georadius eu 2 48 1 km frommember eiffel}
        assert_error {ERR could not decode requested zset member} {r georadiusbymember eu nosuch 1 km}
        # The member is looked for before the radius is read.
        assert_error {ERR could not decode requested zset member} {r georadiusbymember eu nosuch abc km}
        assert_error {ERR need numeric radius} {r georadiusbymember eu eiffel abc km}
        assert_error {ERR need numeric width} {r geosearch eu frommember eiffel bybox x 1 km}
        assert_error {ERR need numeric height} {r geosearch eu frommember eiffel bybox 1 x km}
        assert_error {ERR height or width cannot be negative} {r geosearch eu frommember eiffel bybox -1 1 km}
        assert_error {ERR height or width cannot be negative} {r geosearch eu frommember eiffel bybox 1 -1 km}
        assert_error {ERR unsupported unit provided. please use M, KM, FT, MI} {r geosearch eu frommember eiffel bybox 1 1 yd}
        assert_error {ERR could not decode requested zset member} {r geosearch eu frommember nosuch byradius 1 km}
        assert_error {ERR wrong number of arguments for 'georadius' command} {r georadius eu 1 1 1}
        assert_error {ERR wrong number of arguments for 'geosearch' command} {r geosearch eu frommember eiffel byradius 1}
    }

    test {GEOSEARCH needs exactly one centre and one shape} {
        geo_load_eu
        assert_error {ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for geosearch} \
            {r geosearch eu byradius 10 km asc desc withdist}
        assert_error {ERR exactly one of BYRADIUS and BYBOX can be specified for geosearch} \
            {r geosearch eu fromlonlat 2 48 asc withhash withdist}
        # The command is named as it was typed.
        assert_error {ERR exactly one of BYRADIUS and BYBOX can be specified for GeoSearch} \
            {r GeoSearch eu fromlonlat 2 48 asc withdist}
        assert_error {ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for GEOSEARCHSTORE} \
            {r GEOSEARCHSTORE dst eu bybox 1 1 km asc}
        assert_error {ERR syntax error} {r geosearch eu fromlonlat 2 48 frommember eiffel byradius 1 km}
        assert_error {ERR syntax error} {r geosearch eu frommember eiffel fromlonlat 2 48 byradius 1 km}
        assert_error {ERR syntax error} {r geosearch eu frommember eiffel byradius 1 km bybox 1 1 km}
        assert_error {ERR syntax error} {r geosearch eu frommember eiffel bybox 1 1 km byradius 1 km}
        assert_error {ERR syntax error} {r geosearch eu frommember eiffel byradius 1 km store dst}
        assert_error {ERR syntax error} {r geosearch eu frommember eiffel byradius 1 km storedist}
        assert_error {ERR syntax error} {r geosearchstore dst eu frommember eiffel byradius 1 km store dst}
        # A repeated centre or shape of the same kind: the last one counts.
        assert_equal {bigben} [r geosearch eu frommember eiffel frommember bigben byradius 1 km byradius 2 km]
    }

    test {Searches on a missing key} {
        r del nokey dst
        assert_equal {} [r georadius nokey 1 1 1 km]
        assert_equal {} [r georadiusbymember nokey m 1 km]
        assert_equal {} [r geosearch nokey frommember m byradius 1 km]
        assert_equal "*0\r\n" [r rawcall geosearch nokey fromlonlat 1 1 bybox 1 1 km]
        # A missing key leaves the member and the radius unread...
        assert_equal {} [r georadiusbymember nokey m abc parsec]
        # ... but not the options, nor GEORADIUS's centre and radius.
        assert_error {ERR syntax error} {r georadiusbymember nokey m abc km foo}
        assert_error {ERR need numeric radius} {r georadius nokey 1 1 abc km}
        assert_error {ERR the ANY argument requires COUNT argument} {r geosearch nokey frommember m byradius 1 km any}
        assert_equal 0 [r georadius nokey 1 1 1 km store dst]
        assert_equal 0 [r geosearchstore dst nokey frommember m byradius 1 km]
        assert_equal 0 [r exists dst]
    }

    test {Searches against a key of another type} {
        r set str x
        assert_error $WRONGTYPE {r georadius str 1 1 1 km}
        # The type is checked before anything else.
        assert_error $WRONGTYPE {r georadius str 1000 1 abc km}
        assert_error $WRONGTYPE {r georadiusbymember str m 1 km store dst}
        assert_error $WRONGTYPE {r georadius_ro str 1 1 1 km}
        assert_error $WRONGTYPE {r georadiusbymember_ro str m 1 km}
        assert_error $WRONGTYPE {r geosearch str frommember m byradius 1 km}
        assert_error $WRONGTYPE {r geosearchstore dst str fromlonlat 1 1 bybox 1 1 km}
        # A destination of another type is simply replaced.
        geo_load_eu
        assert_equal 1 [r geosearchstore str eu frommember eiffel byradius 1 km]
        assert_equal zset [r type str]
    }

    test {Searches with no match} {
        geo_load_eu
        assert_equal "*0\r\n" [r rawcall georadius eu 100 0 1 km withdist]
        assert_equal {} [r geosearch eu fromlonlat 100 0 bybox 10 10 km]
    }

    test {Radius 0 finds exactly the points at the centre's position} {
        geo_load_eu
        assert_equal {{eiffel 0.0000}} [r geosearch eu frommember eiffel byradius 0 km withdist]
        lassign [lindex [r geopos eu bigben] 0] lon lat
        assert_equal {bigben} [r georadius eu $lon $lat 0 m]
        assert_equal {} [r georadius eu 2.2944813 48.8585 0 m]
    }

    test {Huge and unbounded radii cover the whole map} {
        geo_load_eu
        r geoadd eu -47.271613776683807 -54.534504198047678 southatlantic 179.9 0 east -179.9 0 west
        foreach r {25000 inf} {
            assert_equal 11 [llength [r georadius eu 0 0 $r km]] "radius $r"
        }
        assert_equal 11 [llength [r geosearch eu fromlonlat 0 0 bybox inf inf m]]
        assert_equal 11 [llength [r geosearch eu fromlonlat 0 0 byradius 1e300 km]]
        assert_equal 4 [llength [r georadius eu 0 0 5000 km]]
    }

    test {Searches across the antimeridian and near the poles} {
        r del g
        r geoadd g 179.5 36 east -179.5 36 west
        assert_equal {east west} [r geosearch g fromlonlat 179 37 bybox 400 400 km asc]
        assert_equal {west east} [r geosearch g fromlonlat -179 37 bybox 400 400 km asc]
        assert_equal {east west} [r georadius g 179.9 36 100 km asc]
        r del g
        r geoadd g 45 65 a -135 85.05 b
        assert_equal {a b} [r georadiusbymember g a 5009431 m]
        r del g
        r geoadd g -0.15307903289794921875 85 n1 0.3515625 85.00019260486917005437 n2
        assert_equal {n1 n2} [r georadiusbymember g n1 4891.94 m]
        r del g
        r geoadd g 180 85.05112878 max -180 -85.05112878 min 0 0 zero
        assert_equal {{max 0.0000 13510798882111488}} [r geosearch g fromlonlat 180 85.05112878 byradius 100 km withdist withhash]
        assert_equal {{min 0.0001}} [r geosearch g fromlonlat -180 -85.05112878 bybox 1000 1000 km withdist]
    }

    test {BYBOX: long and narrow boxes, corners and edges} {
        r del g
        r geoadd g 12.75 36.995 t1 12.75 36.50 t2 13.00 36.50 t3
        assert_equal {t1} [r geosearch g fromlonlat 15 37 bybox 400 2 km]
        r geoadd g -1 37.00 t4
        assert_equal {t1 t4} [r geosearch g fromlonlat 15 37 bybox 3000 2 km asc]
        r del g
        r geoadd g 12.758489 38.788135 edge1 17.241510 38.788135 edge2 17.250000 35.202000 edge3 \
            12.750000 35.202000 edge4 12.748489955781654 37 edge5 15 38.798135872540925 edge6 \
            17.251510044218346 37 edge7 15 35.201864127459075 edge8
        assert_equal {edge1 edge2 edge5 edge7} [lsort [r geosearch g fromlonlat 15 37 bybox 400 400 km asc]]
        # A circle of the same size misses the box's corners.
        assert_equal {edge5 edge7} [lsort [r georadius g 15 37 200 km]]
    }

    # ---- STORE forms ----------------------------------------------------------

    test {STORE keeps the geohashes, STOREDIST the distances in the unit} {
        geo_load_eu
        r del dst
        assert_equal 3 [r georadius eu 2.35 48.85 500 km store dst]
        assert_equal {bigben 2163557700952384 eiffel 3663832614286749 dam 3665667490693366} [r zrange dst 0 -1 withscores]
        assert_equal 3 [r georadius eu 2.35 48.85 500 km storedist dst]
        assert_equal {eiffel 4.1683549949091816 bigben 343.46237583661883 dam 430.71857562108033} [r zrange dst 0 -1 withscores]
        assert_equal 3 [r georadiusbymember eu eiffel 500 km storedist dst]
        assert_equal {eiffel 0 bigben 340.6407822636362 dam 431.51485845527674} [r zrange dst 0 -1 withscores]
        assert_equal 3 [r geosearchstore dst eu frommember eiffel byradius 500 km]
        assert_equal {bigben 2163557700952384 eiffel 3663832614286749 dam 3665667490693366} [r zrange dst 0 -1 withscores]
        assert_equal 3 [r geosearchstore dst eu frommember eiffel byradius 500 km storedist]
        assert_equal {eiffel 0 bigben 340.6407822636362 dam 431.51485845527674} [r zrange dst 0 -1 withscores]
        assert_encoding listpack dst
    }

    test {STORE with COUNT keeps the nearest (or farthest with DESC)} {
        geo_load_eu
        r del dst
        assert_equal 2 [r georadius eu 2.35 48.85 5000 km storedist dst count 2]
        assert_equal {eiffel bigben} [r zrange dst 0 -1]
        assert_equal 1 [r georadius eu 2.35 48.85 5000 km storedist dst desc count 1]
        assert_equal {acropolis} [r zrange dst 0 -1]
        assert_equal 2 [r geosearchstore dst eu fromlonlat 2.35 48.85 bybox 5000 5000 km count 2 any]
        assert_equal 2 [r zcard dst]
        # The last STORE / STOREDIST wins.
        assert_equal 1 [r georadius eu 2.35 48.85 10 km store a storedist dst]
        assert_equal {eiffel 4.1683549949091816} [r zrange dst 0 -1 withscores]
    }

    test {STORE errors} {
        geo_load_eu
        assert_error {ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options} \
            {r georadius eu 2 48 10 km store dst withdist}
        assert_error {ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options} \
            {r georadiusbymember eu eiffel 10 km withhash storedist dst}
        assert_error {ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options} \
            {r geosearchstore dst eu frommember eiffel byradius 10 km withcoord}
        assert_error {ERR syntax error} {r georadius eu 2 48 10 km store}
        assert_error {ERR syntax error} {r georadius_ro eu 2 48 10 km store dst}
        assert_error {ERR syntax error} {r georadiusbymember_ro eu eiffel 10 km storedist dst}
    }

    test {An empty result deletes the destination} {
        geo_load_eu
        r set dst x
        assert_equal 0 [r georadius eu 100 0 1 km store dst]
        assert_equal 0 [r exists dst]
        r set dst x
        assert_equal 0 [r geosearchstore dst eu fromlonlat 100 0 byradius 1 km]
        assert_equal 0 [r exists dst]
        r set dst x
        assert_equal 0 [r georadius nokey 1 1 1 km store dst]
        assert_equal 0 [r exists dst]
    }

    test {STORE onto the source key, TTL and encoding of the result} {
        geo_load_eu
        assert_equal 3 [r georadius eu 2.35 48.85 500 km store eu]
        assert_equal {bigben eiffel dam} [r zrange eu 0 -1]
        r set dst x ex 1000
        geo_load_eu
        r geosearchstore dst eu frommember eiffel byradius 500 km
        assert_equal -1 [r ttl dst]
        r config set zset-max-listpack-entries 2
        r geosearchstore dst eu frommember eiffel byradius 500 km
        assert_encoding skiplist dst
        r geosearchstore dst eu frommember eiffel byradius 300 km
        assert_encoding listpack dst
        r config set zset-max-listpack-entries 128
    }

    # ---- around the commands: notifications, WATCH, ACL, keys, AOF --------------

    test {Keyspace notifications} {
        r config set notify-keyspace-events KEA
        set c [event_subscriber geo-marker __keyevent@0__:*]
        geo_load_eu
        r geoadd eu 2.2944813 48.8583701 eiffel
        r geoadd eu XX 1 1 nosuch
        r georadius eu 2.35 48.85 500 km store dst
        r geosearchstore dst eu frommember eiffel byradius 500 km storedist
        r georadius eu 100 0 1 km store dst
        r georadius eu 100 0 1 km
        set events [events_until_marker $c geo-marker]
        r config set notify-keyspace-events ""
        $c close
        assert_equal {{__keyevent@0__:del eu} {__keyevent@0__:zadd eu} {__keyevent@0__:georadiusstore dst} {__keyevent@0__:geosearchstore dst} {__keyevent@0__:del dst}} $events
    }

    test {WATCH: GEOADD and the STORE forms touch their keys} {
        geo_load_eu
        r watch eu
        r geoadd eu 2.2944813 48.8583701 eiffel
        r multi
        r ping
        assert_equal {PONG} [r exec]
        r watch eu
        r geoadd eu 1 1 newpoint
        r multi
        r ping
        assert_equal {} [r exec]
        r del dst
        r watch dst
        r geosearchstore dst eu frommember eiffel byradius 500 km
        r multi
        r ping
        assert_equal {} [r exec]
        r watch dst
        r georadius eu 2.35 48.85 500 km
        r multi
        r ping
        assert_equal {PONG} [r exec]
    }

    test {COMMAND GETKEYS finds the STORE keys} {
        assert_equal {k dst} [r command getkeys georadius k 0 0 1 km store dst]
        assert_equal {k d1 d2} [r command getkeys georadius k 0 0 1 km storedist d2 store d1]
        assert_equal {k} [r command getkeys georadius k 0 0 1 km store]
        assert_equal {k dst} [r command getkeys georadiusbymember k m 1 km store dst]
        assert_equal {k} [r command getkeys georadius_ro k 0 0 1 km store dst]
        assert_equal {d s} [r command getkeys geosearchstore d s frommember m byradius 1 km]
        assert_equal {k} [r command getkeys geosearch k frommember m byradius 1 km]
        assert_equal {k} [r command getkeys geoadd k 1 1 m]
        assert_equal {{k {RO access}} {dst {OW update}}} [r command getkeysandflags georadius k 0 0 1 km store dst]
    }

    test {ACL key permissions: the destination needs write access} {
        geo_load_eu
        r acl setuser geouser on nopass +@all %R~eu ~dst*
        set c [redis_client]
        $c auth geouser nopass
        assert_equal {eiffel} [$c geosearch eu frommember eiffel byradius 1 km]
        assert_equal 1 [$c geosearchstore dst1 eu frommember eiffel byradius 1 km]
        assert_equal 1 [$c georadius eu 2.35 48.85 10 km store dst2]
        assert_error {NOPERM*} {$c geosearchstore other eu frommember eiffel byradius 1 km}
        assert_error {NOPERM*} {$c georadius eu 2.35 48.85 10 km store other}
        assert_error {NOPERM*} {$c geoadd eu 1 1 x}
        $c close
        r acl deluser geouser
    }

    test {Source lookups count keyspace hits and misses, also in the forms that write} {
        r del eu nokey dst
        r geoadd eu 2.2944813 48.8583701 eiffel -0.1246254 51.5007292 bigben
        r config resetstat
        r georadius eu 2.35 48.85 500 km store dst
        r georadius nokey 2.35 48.85 500 km store dst
        r geosearchstore dst eu frommember eiffel byradius 10 km
        r geosearch eu frommember eiffel byradius 10 km
        r geopos eu eiffel
        r geodist nokey a b
        r georadiusbymember_ro eu eiffel 10 km
        # GEOADD's lookup is a write lookup: not counted.
        r geoadd eu 1 1 x
        assert_equal {5 2} [list [s keyspace_hits] [s keyspace_misses]]
    }

    test {MULTI/EXEC and scripts run the geo commands} {
        geo_load_eu
        r multi
        r geoadd eu 1 1 x
        r geodist eu eiffel bigben km
        r georadius eu 2.35 48.85 10 km store dst
        assert_equal {1 340.6408 1} [r exec]
        assert_equal {{2.29448229074478149 48.85837130043967136}} [r eval {return redis.call('geopos', KEYS[1], 'eiffel')} 1 eu]
        assert_equal 340.6408 [r eval {return redis.call('geodist', KEYS[1], 'eiffel', 'bigben', 'km')} 1 eu]
    }

    # ---- randomized searches against a brute-force scan ---------------------------

    # Checks one search: res (the server's members) against every point's
    # distance recomputed here. A point only one side sees must lie on the
    # boundary (relative 1e-9), where GEOPOS's rounding can decide. A point
    # the inside proc marks as past the search's bounding box (its third
    # element) may be missing: the cells searched stop at that box, as
    # Redis's do, and a box's corners reach past it in longitude.
    proc geo_check_search {what res pos inside_proc} {
        set want {}
        set edge {}
        set past {}
        dict for {m p} $pos {
            lassign [{*}$inside_proc {*}$p] in margin outside
            if {$in} {lappend want $m}
            if {abs($margin) < 1e-9} {lappend edge $m}
            if {$outside ne "" && $outside} {lappend past $m}
        }
        set got [lsort $res]
        set want [lsort $want]
        if {$got eq $want} return
        foreach m [concat $got $want] {
            set missing [expr {[lsearch -exact $got $m] < 0}]
            if {$missing == ([lsearch -exact $want $m] < 0)} continue
            if {[lsearch -exact $edge $m] >= 0} continue
            if {$missing && [lsearch -exact $past $m] >= 0} continue
            fail "$what: $m is [expr {$missing ? {missing} : {extra}}] ([dict get $pos $m])"
        }
    }

    # Redis's bounding box of a box search, {min_lon max_lon}: the
    # longitude span is measured on the edge nearer the pole.
    proc geo_box_lon_bounds {w_m h_m clon clat} {
        set r 6372797.560856
        set dlat [expr {($h_m / 2) / $r / $::geo_d2r}]
        set edge [expr {$clat < 0 ? $clat - $dlat : $clat + $dlat}]
        set dlon [expr {($w_m / 2) / $r / cos([geo_rad $edge]) / $::geo_d2r}]
        list [expr {$clon - $dlon}] [expr {$clon + $dlon}]
    }

    foreach shape {byradius bybox} {
        test "GEOSEARCH $shape agrees with a brute-force scan (random points)" {
            set seed [clock milliseconds]
            expr {srand($seed)}
            for {set round 0} {$round < 12} {incr round} {
                r del pts
                set args {}
                set n 2000
                for {set i 0} {$i < $n} {incr i} {
                    lassign [geo_random_point] lon lat
                    lappend args $lon $lat p$i
                }
                r geoadd pts {*}$args
                set members [r zrange pts 0 -1]
                set pos [geo_positions pts $members]
                lassign [geo_random_point] clon clat
                # Mostly tens to hundreds of km (cells' edges matter most),
                # sometimes thousands.
                set big [expr {$round % 4 == 3}]
                set a [expr {($big ? 5000 : 300) * rand() + 1}]
                set b [expr {($big ? 5000 : 300) * rand() + 1}]
                if {$shape eq "byradius"} {
                    set res [r geosearch pts fromlonlat $clon $clat byradius $a km]
                    set inside [list apply {{r clon clat lon lat} {
                        set d [geo_dist $clon $clat $lon $lat]
                        list [expr {$d <= $r}] [expr {($d - $r) / $r}]
                    }} [expr {$a * 1000}] $clon $clat]
                } else {
                    set res [r geosearch pts fromlonlat $clon $clat bybox $a $b km]
                    set inside [list apply {{w h clon clat lon lat} {
                        set dy [expr {[geo_lat_dist $lat $clat] - $h / 2}]
                        set dx [expr {[geo_dist $lon $lat $clon $lat] - $w / 2}]
                        set in [geo_in_box $w $h $clon $clat $lon $lat]
                        lassign [geo_box_lon_bounds $w $h $clon $clat] lo hi
                        set past [expr {$lon < $lo || $lon > $hi}]
                        list $in [expr {min(abs($dx) / $w, abs($dy) / $h)}] $past
                    }} [expr {$a * 1000}] [expr {$b * 1000}] $clon $clat]
                }
                geo_check_search "seed $seed round $round: $shape $a $b km at $clon $clat" $res $pos $inside
            }
        }
    }

    test {COUNT returns the nearest points in order, with their distances (random points)} {
        set seed [clock milliseconds]
        expr {srand($seed)}
        for {set round 0} {$round < 8} {incr round} {
            r del pts
            set args {}
            for {set i 0} {$i < 1000} {incr i} {
                set lon [expr {10 + rand() * 10}]
                set lat [expr {40 + rand() * 10}]
                lappend args $lon $lat p$i
            }
            r geoadd pts {*}$args
            set pos [geo_positions pts [r zrange pts 0 -1]]
            set clon [expr {12 + rand() * 6}]
            set clat [expr {42 + rand() * 6}]
            set all {}
            dict for {m p} $pos {
                lassign $p lon lat
                lappend all [list $m [geo_dist $clon $clat $lon $lat]]
            }
            set all [lsort -real -index 1 $all]
            set k [expr {1 + int(rand() * 50)}]
            set res [r geosearch pts fromlonlat $clon $clat byradius 2000 km count $k withdist]
            assert_equal $k [llength $res] "seed $seed"
            foreach item $res exp [lrange $all 0 [expr {$k - 1}]] {
                lassign $item m d
                assert_equal [lindex $exp 0] $m "seed $seed round $round"
                assert {abs($d - [lindex $exp 1] / 1000.0) <= 0.00005001} "seed $seed: $m $d vs [lindex $exp 1]"
            }
            # DESC: the farthest first.
            set res [r georadius pts $clon $clat 2000 km count $k desc]
            set far [lreverse [lrange $all end-[expr {$k - 1}] end]]
            assert_equal [lmap e $far {lindex $e 0}] $res "seed $seed round $round desc"
        }
    }

    test {BYBOX edges: points on the box's sides and corners (random boxes)} {
        set seed [clock milliseconds]
        expr {srand($seed)}
        for {set round 0} {$round < 20} {incr round} {
            r del pts
            lassign [geo_random_point] clon clat
            set w [expr {10 + int(rand() * 10000)}]
            set h [expr {10 + int(rand() * 10000)}]
            set R 6372797.560856
            set dlat [expr {$h / 2.0 / $R / $::geo_d2r}]
            set dlon_mid [expr {$w / 2.0 / $R / cos([geo_rad $clat]) / $::geo_d2r}]
            set dlon_top [expr {$w / 2.0 / $R / cos([geo_rad [expr {$clat + $dlat}]]) / $::geo_d2r}]
            set dlon_bot [expr {$w / 2.0 / $R / cos([geo_rad [expr {$clat - $dlat}]]) / $::geo_d2r}]
            set pts [list \
                n [list $clon [expr {$clat + $dlat}]] s [list $clon [expr {$clat - $dlat}]] \
                e [list [expr {$clon + $dlon_mid}] $clat] w [list [expr {$clon - $dlon_mid}] $clat] \
                ne [list [expr {$clon + $dlon_top}] [expr {$clat + $dlat}]] \
                nw [list [expr {$clon - $dlon_top}] [expr {$clat + $dlat}]] \
                se [list [expr {$clon + $dlon_bot}] [expr {$clat - $dlat}]] \
                sw [list [expr {$clon - $dlon_bot}] [expr {$clat - $dlat}]]]
            foreach {name p} $pts {
                lassign $p x y
                if {$x > 180} {set x [expr {$x - 360}]}
                if {$x < -180} {set x [expr {$x + 360}]}
                r geoadd pts $x $y $name
            }
            set box "seed $seed round $round: $clon $clat ${w}x$h m"
            # 2 m of slack on each side decides.
            assert_equal {e n ne nw s se sw w} [lsort [r geosearch pts fromlonlat $clon $clat bybox [expr {$w + 4}] [expr {$h + 4}] m]] $box
            assert_equal {n s} [lsort [r geosearch pts fromlonlat $clon $clat bybox [expr {$w - 4}] [expr {$h + 4}] m]] $box
            assert_equal {e w} [lsort [r geosearch pts fromlonlat $clon $clat bybox [expr {$w + 4}] [expr {$h - 4}] m]] $box
            assert_equal {} [r geosearch pts fromlonlat $clon $clat bybox [expr {$w - 4}] [expr {$h - 4}] m] $box
        }
    }

    test {Centres and radii that once exposed cell-edge bugs in Redis} {
        # seed, radius km, centre: the search must agree with a brute-force scan.
        foreach v {
            {11 7083 81.634948934258375 30.561509253718668}
            {12 5416 -70.863281847379767 -46.347003465679947}
            {13 156 149.29737817929004 15.95807862745508}
            {14 143 59.235461856813856 66.269555127373678}
            {15 154 -90.187939661642517 66.615930412251487}
            {16 149 84.062063109158544 -65.685403922426232}
            {17 16751 -1.8175081637769495 20.665668878082954}
        } {
            lassign $v seed km clon clat
            expr {srand($seed)}
            r del pts
            set args {}
            for {set i 0} {$i < 2000} {incr i} {
                lassign [geo_random_point] lon lat
                lappend args $lon $lat p$i
            }
            r geoadd pts {*}$args
            set pos [geo_positions pts [r zrange pts 0 -1]]
            set res [r georadius pts $clon $clat $km km]
            set inside [list apply {{r clon clat lon lat} {
                set d [geo_dist $clon $clat $lon $lat]
                list [expr {$d <= $r}] [expr {($d - $r) / $r}]
            }} [expr {$km * 1000}] $clon $clat]
            geo_check_search "vector $v" $res $pos $inside
        }
    }
}

proc geo_read_file {path} {
    if {![file exists $path]} {return ""}
    set fd [open $path rb]
    set data [read $fd]
    close $fd
    return $data
}

start_server {tags {geo} overrides {appendonly yes}} {
    test {GEOADD goes to the AOF as ZADD, the STORE forms as sent} {
        r geoadd g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania
        r geoadd g Ch xX 13.361389 38.125557 Palermo
        r geoadd g NX 13.361389 38.125557 Palermo
        r georadius g 15 37 200 km
        r georadius g 15 37 200 km STORE dst
        r geosearchstore dst2 g FROMLONLAT 15 37 BYRADIUS 200 km STOREDIST
        r georadius nokey 15 37 200 km STORE dst
        r georadius nokey 15 37 200 km STORE dst
        set f [file join [srv dir] appendonlydir appendonly.aof.1.incr.aof]
        set want [join {
            *2 $6 SELECT $1 0
            *6 $4 zadd $1 g $16 3479099956230698 $7 Palermo $16 3479447370796909 $7 Catania
            *6 $4 zadd $1 g $2 Ch $2 xX $16 3479100677631595 $7 Palermo
            *8 $9 georadius $1 g $2 15 $2 37 $3 200 $2 km $5 STORE $3 dst
            *10 $14 geosearchstore $4 dst2 $1 g $10 FROMLONLAT $2 15 $2 37 $8 BYRADIUS $3 200 $2 km $9 STOREDIST
            *8 $9 georadius $5 nokey $2 15 $2 37 $3 200 $2 km $5 STORE $3 dst
        } "\r\n"]
        append want "\r\n"
        set got ""
        wait_for_condition 50 100 {
            [string length [set got [geo_read_file $f]]] >= [string length $want]
        } else {
            fail "AOF incomplete: [string map [list \r\n { }] $got]"
        }
        assert_equal [string map [list \r\n { }] $want] [string map [list \r\n { }] $got]
    }
}
