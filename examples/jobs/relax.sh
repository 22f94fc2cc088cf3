#!/bin/sh
# A stand-in for a relaxation: four steps, each appending its energy to md.log (what
# `labmate job submit --follow md.log` streams into the job's log).
echo relaxing
for i in 1 2 3 4; do echo "step $i E = -$i.0" >> md.log; sleep 0.2; done
echo relaxed
