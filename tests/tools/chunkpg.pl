#!/usr/bin/perl
# chunkpg -- RECONSTRUCTED from the DBA blog post "Buffer waits" (shared/seeds/000_*.txt), so
# ifxtop's tests can compare `ifxtop resolve` with the seed's own algorithm. Usage, as in the blog:
#   onstat -X | CHUNKPG_ONCHECK_PE=pe.txt perl chunkpg.pl -k 4
#
# The blog's HTML ate parts of the script. Restored (published text -> this file, and why):
#  1. `while () {` twice -> `while (<ONCHECKPE>) {` and `while (<STDIN>) {`: the HTML dropped
#     the `<...>` readline operators. STDIN rather than <>: check_params leaves `-k 4` in @ARGV,
#     which <> would try to open as files.
#  2. The lookup line `for (my $i = 1; $i = $start{$chunk}{$i} && ...` lost everything between a
#     `<` and a `>`: restored as `for (my $i = 1; $i <= $c{$chunk}; $i++) {` followed by
#     `if ($page/($ps{$chunk}/$syspagesize) >= $start{$chunk}{$i} && ...`. %c is reset to 0 for
#     each chunk and used nowhere else in the published text: it is the per-chunk extent count.
#  3. The object branch stores at index $count but never increments it, while the lookup starts
#     at 1: the increment was lost with the rest; restored as `$c{$chunkno} = ++$count;`.
#  4. Every `}` that started a line was dropped (lone `}` lines, `} elsif`, `} else`): restored
#     where the if/elsif chain, the loops and the subs need them.
#  5. `chomp;` at the top of both loops: `$_ eq ' Chunk Pathname ...'` can only match a line
#     without its newline, and `print "$_ "` then the object then "\n" is one line only if the
#     newline was removed first.
#  6. `print "$_ ";` -> `print "$_\t";`: the blog collapsed runs of whitespace, so the TAB typed
#     inside the string became one blank.
#  7. The header string compared with `eq` had its blanks collapsed the same way: restored with
#     oncheck's real spacing (line 4 of tests/fixtures/oncheck-pe/gbase8s-datadbs01-16k-*.txt).
#  8. The shebang line and the call `main();` (the published text defines `sub main` and never
#     calls it).
# Changed for testing, not restorations:
#  a. `open (ONCHECKPE, "oncheck -pe |")` reads the file named by $CHUNKPG_ONCHECK_PE when set
#     (there is no Informix server here); the INFORMIXDIR/INFORMIXSERVER checks, which exist only
#     to run oncheck, are made only when it is unset.
#  b. $syspagesize comes from $CHUNKPG_SYSPAGESIZE when set ("change to 4 kb if required").
# Kept exactly as published, on purpose (ifxtop differs; tests/model/extents.rs asserts each):
#  - `<= $end{...}` with $end = offset + size: the first page of the next extent matches too, and
#    both names are printed, run together (off by one; ifxtop's extents are half-open).
#  - `$page/(...)` is Perl's float division: pages inside a 16 KB page are compared as fractions.
#  - `$dbs{$chunkno} = $lastdbs;` on a `DBspace Usage Report:` line runs while $chunkno is still
#    the previous dbspace's last chunk: that chunk is then reported in the NEXT dbspace.
#  - Only rows matching /^ \w+:\'\w+\'\.\w+ +/ are kept: FREE, reserved pages, the logs, sbspace
#    rows, system-named indexes (` 101_1`) and names with other characters never resolve, and
#    only the newer layout's exact chunk header is recognised (older reports resolve nothing).

# Decipher chunk and page numbers

use strict;
use warnings;


sub main {

my $key = &check_params;

my $chunkno = 0;
my $nextinfo = 0;
my $pagesize = 0;
my $count = 0;
my $lastdbs = '';
my $syspagesize = 2; # change to 4 kb if required
$syspagesize = $ENV{'CHUNKPG_SYSPAGESIZE'} if $ENV{'CHUNKPG_SYSPAGESIZE'};

my (%objs, %start, %end, %c, %ps, %dbs);

if ($ENV{'CHUNKPG_ONCHECK_PE'}) {
open (ONCHECKPE, '<', $ENV{'CHUNKPG_ONCHECK_PE'}) or die "$ENV{'CHUNKPG_ONCHECK_PE'}: $!\n";
} else {
open (ONCHECKPE, "oncheck -pe |");
}
while (<ONCHECKPE>) {
chomp;
if ($nextinfo == 1) {
$nextinfo = 0;
my ($blank, $path, $size, $used, $free);
($blank, $chunkno, $path, $pagesize, $size, $used, $free) = split / +/;
# print "$chunkno: $pagesize kb\n";
$count = 0;
$c{$chunkno} = 0;
$ps{$chunkno} = $pagesize;
} elsif ($_ eq ' Chunk Pathname                             Pagesize(k)  Size(p)  Used(p)  Free(p)') {
$nextinfo = 1;
} elsif ($_ =~ /^DBspace Usage Report: /) {
my @parts = split / +/;
$lastdbs = $parts[3];
$dbs{$chunkno} = $lastdbs;
} elsif ($_ =~ /^ \w+:\'\w+\'\.\w+ +/) {
my ($blank, $obj, $offset, $size) = split / +/;
# printf ("%s: %d -> %d\n", $obj, $offset*2, $offset*2+$size*2);
$c{$chunkno} = ++$count;
$objs{$chunkno}{$count} = $obj;
$start{$chunkno}{$count} = $offset;
$end{$chunkno}{$count} = $size + $offset;
if (!$dbs{$chunkno}) {
$dbs{$chunkno} = $lastdbs;
}
}
}
close (ONCHECKPE);

while (<STDIN>) {
chomp;
print "$_\t";
$_ =~ s/^ +//;
my @vals = split / +/;
if ($vals[$key-1] && $vals[$key-1] =~ /\d+\:\d+/) {
my ($chunk, $page) = split /\:/, $vals[$key-1];
for (my $i = 1; $i <= $c{$chunk}; $i++) {
if ($page/($ps{$chunk}/$syspagesize) >= $start{$chunk}{$i} && $end{$chunk}{$i} && $page/($ps{$chunk}/$syspagesize) <= $end{$chunk}{$i}) {
print $objs{$chunk}{$i}.','.$dbs{$chunk};
}
}
}
print "\n";
}
}

sub check_params () {

if (!$ENV{'CHUNKPG_ONCHECK_PE'}) {
die print "INFORMIXDIR is not set.\n" unless $ENV{'INFORMIXDIR'};
die print "INFORMIXDIR is not set to a valid directory (\'$ENV{'INFORMIXDIR'}\').\n" unless -d $ENV{'INFORMIXDIR'};
die print "INFORMIXSERVER is not set.\n" unless $ENV{'INFORMIXSERVER'};
}

if ($ARGV[0] && $ARGV[0] eq '-k') {
if ($ARGV[1] && $ARGV[1] !~ /\D/) {
return ($ARGV[1]);
} else {
print "Invalid key number: $ARGV[1]\n";
exit 1;
}
} elsif ($ARGV[0]) {
print "Invalid parameter: $ARGV[1]\n";
exit 1;
}
return (1);
}

main();
