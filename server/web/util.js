// Small helpers the dashboard's modules share: DOM building and how ids, times, sizes and
// durations are said.

export const $ = (sel) => document.querySelector(sel);

// short is an id for the eye: its first 8 characters, or a job's scheduler and its id's tail
// (job ids begin with their date).
export const short = (id) => {
  const m = /^(local|slurm)-.+(.{8})$/.exec(id);
  return m ? `${m[1]}-${m[2]}` : id.slice(0, 8);
};

// clock says a Unix time to the second: "14:03:27", with the date when not today.
export function clock(unix) {
  if (!unix) return "";
  const d = new Date(unix * 1000);
  const t = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  return d.toDateString() === new Date().toDateString() ? t : d.toLocaleDateString([], { month: "short", day: "numeric" }) + " " + t;
}

// when says a Unix time briefly: the time of day today, else the date too.
export function when(unix) {
  const d = new Date(unix * 1000), now = new Date();
  const time = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  if (d.toDateString() === now.toDateString()) return time;
  return d.toLocaleDateString([], { month: "short", day: "numeric", ...(d.getFullYear() !== now.getFullYear() && { year: "numeric" }) }) + " " + time;
}

export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

export function bytes(n) {
  if (n < 1024) return n + " B";
  if (n < 1 << 20) return (n / 1024).toFixed(1) + " KiB";
  if (n < 1 << 30) return (n / (1 << 20)).toFixed(1) + " MiB";
  return (n / (1 << 30)).toFixed(1) + " GiB";
}

// duration says s seconds briefly: "850 ms", "42 s", "3 min 20 s", "2 h 5 min".
export function duration(s) {
  if (s < 1) return Math.round(s * 1000) + " ms";
  if (s < 60) return (s < 10 ? s.toFixed(1) : Math.round(s)) + " s";
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 >= 1 ? " " + Math.floor(s % 60) + " s" : ""}`;
  return `${Math.floor(s / 3600)} h${s % 3600 >= 60 ? " " + Math.floor((s % 3600) / 60) + " min" : ""}`;
}
