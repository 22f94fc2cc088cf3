package rounds

import (
	"fmt"
	"slices"
	"strings"

	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/llmtest"
)

// LibraryTask is a materials task one of labmate's built-in skills (memory/builtin) covers.
// Without the skill the scripted model writes Naive[0] and, after each failure, the next
// cell of Naive — the mistakes the skill's failure facts name; with the skill recalled into
// its prompt it writes Skilled, the skill's procedure.
type LibraryTask struct {
	ID, Goal, Skill           string
	Title, Action, Checkpoint string
	Naive                     []string
	Skilled                   string
}

// lmpCell is a shell cell that writes a LAMMPS input and runs it.
func lmpCell(input string) string {
	return "cat > in.lmp <<'EOF'\n" + strings.TrimSpace(input) + "\nEOF\nlmp -in in.lmp -log none"
}

const cuHead = `units metal
boundary p p p
lattice fcc 3.615
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
`

const vacancyTail = `thermo_style custom step pe press
fix relax all box/relax iso 0.0
minimize 1e-12 1e-12 1000 10000
unfix relax
variable N0 equal $(count(all))
variable E0 equal $(pe)
group gone id 1
delete_atoms group gone
minimize 1e-12 1e-12 5000 50000
print "RESULT Ef = $(pe-(v_N0-1)/v_N0*v_E0:%.4f)"
`

// LibraryTasks are the materials tasks of the library comparison: each fails once for a
// model that does not know the skill's failure facts.
func LibraryTasks() []LibraryTask {
	eam := "pair_style eam\npair_coeff * * /usr/share/lammps/potentials/Cu_u3.eam\n"
	return []LibraryTask{{
		ID: "cu-vacancy-lammps", Skill: "cu-vacancy-formation",
		Goal:  "Compute the vacancy formation energy of Cu with LAMMPS and the EAM potential Cu_u3.eam.",
		Title: "vacancy formation energy", Action: "relax a 256-site fcc Cu cell, remove one atom, relax again, Ef = E(N-1) - (N-1)/N E(N)",
		Checkpoint: "both minimizations converge and Ef is printed",
		Naive: []string{
			lmpCell(cuHead + "pair_style eam/alloy\npair_coeff * * /usr/share/lammps/potentials/Cu_u3.eam Cu\n" + vacancyTail),
			lmpCell(cuHead + eam + vacancyTail),
		},
		Skilled: lmpCell(cuHead + eam + vacancyTail),
	}, {
		ID: "cu-c44-lammps", Skill: "cu-elastic-constants",
		Goal:  "Compute the shear elastic constant C44 of Cu with LAMMPS and the EAM potential Cu_mishin1.eam.alloy.",
		Title: "shear elastic constant", Action: "relax the fcc cell, apply a +-0.2% yz shear, relax the atoms, C44 from the stress difference",
		Checkpoint: "C44 is printed from both strains",
		Naive: []string{
			lmpCell(c44("block")),
			lmpCell(c44("prism")),
		},
		Skilled: lmpCell(c44("prism")),
	}}
}

// c44 is the C44 input on a box made by region style ("block" cannot be tilted).
func c44(style string) string {
	region := "region box block 0 3 0 3 0 3"
	if style == "prism" {
		region = "region box prism 0 3 0 3 0 3 0 0 0"
	}
	return `units metal
boundary p p p
lattice fcc 3.615
` + region + `
create_box 1 box
create_atoms 1 box
pair_style eam/alloy
pair_coeff * * /usr/share/lammps/potentials/Cu_mishin1.eam.alloy Cu
thermo_style custom step pe press pyz
fix relax all box/relax iso 0.0
minimize 1e-14 1e-14 1000 10000
unfix relax
variable L equal $(lx)
change_box all yz final $(v_L*0.004) remap units box
minimize 1e-14 1e-14 1000 10000
variable sp equal $(-pyz)
change_box all yz final $(-v_L*0.004) remap units box
minimize 1e-14 1e-14 1000 10000
variable sm equal $(-pyz)
print "RESULT C44 = $((v_sp-v_sm)/0.008*1e-4:%.2f)"
`
}

// LibraryPolicy is the scripted model of the library comparison: it plans one step, writes the
// skill's cell when the prompt shows the skill (memory recalled it), otherwise the naive cells
// one failure after the other, accepts a cell that ran and answers.
func LibraryPolicy(tasks []LibraryTask) llmtest.Turn {
	return scripted(AsTasks(tasks),
		func(t *Task, _ string) (string, string) { return "the checkpoint is met", t.Checkpoint },
		func(t *Task, req *llm.Request) string {
			lt := tasks[slices.IndexFunc(tasks, func(lt LibraryTask) bool { return lt.ID == t.ID })]
			if strings.Contains(req.Messages[0].Content, "skill "+lt.Skill+" ") {
				return lt.Skilled
			}
			n := 0
			for _, m := range req.Messages {
				if m.Role == llm.RoleTool && failed(m) {
					n++
				}
			}
			return lt.Naive[min(n, len(lt.Naive)-1)]
		})
}

// AsTasks gives the library tasks as tasks of the family for Round (kernel shell).
func AsTasks(lts []LibraryTask) []Task {
	var out []Task
	for _, lt := range lts {
		out = append(out, Task{ID: lt.ID, Goal: lt.Goal, Kernel: "shell", Title: lt.Title, Action: lt.Action, Checkpoint: lt.Checkpoint,
			MaterialOrRate: fmt.Sprintf("skill %s", lt.Skill)})
	}
	return out
}
