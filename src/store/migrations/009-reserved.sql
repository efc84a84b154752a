-- Number 009 is taken by a migration made alongside this one's successor; this file
-- only keeps the numbers without a gap until the two meet, and is replaced by it.
select 1;
