/**
 * timeline.html: timeline.json drawn offline, in one self-contained page (no network, no
 * external script): Perfetto UI needs the network, and chrome://tracing is going away. One
 * trial window at a time, a row per track and nesting depth, the hand-off → work arrows; the
 * mouse wheel zooms, dragging pans. The URL's hash chooses the view:
 * `#pid=3&from=1200&to=1600` (µs from the window's start).
 *
 * Context: main thread; pure.
 */
import type { TimelineFile } from './timeline.js';

/** The page for `file`. */
export function renderTimelineHtml(file: TimelineFile, title = 'deferlab timeline'): string {
  // Only what the page draws, as compact arrays: [pid, tid, ts, dur, name, cat] and flows.
  const slices: (string | number)[][] = [];
  const instants: (string | number)[][] = [];
  const flows = new Map<number, { s?: number[]; f?: number[] }>();
  const procs: Record<number, string> = {};
  const threads: Record<string, string> = {};
  for (const e of file.traceEvents) {
    if (e.ph === 'X') slices.push([e.pid, e.tid, e.ts!, e.dur!, e.name, e.cat ?? '']);
    else if (e.ph === 'i') instants.push([e.pid, e.tid, e.ts!, e.name]);
    else if (e.ph === 's' || e.ph === 'f') {
      const fl = flows.get(e.id!) ?? {};
      fl[e.ph] = [e.pid, e.tid, e.ts!];
      flows.set(e.id!, fl);
    } else if (e.ph === 'M' && e.name === 'process_name') procs[e.pid] = String(e.args?.name);
    else if (e.ph === 'M' && e.name === 'thread_name') threads[`${e.pid}:${e.tid}`] = String(e.args?.name);
  }
  const data = {
    slices,
    instants,
    flows: [...flows.values()].filter((f) => f.s && f.f).map((f) => [...f.s!, ...f.f!.slice(1)]),
    procs,
    threads,
    meta: file.otherData,
  };
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>
body{font:13px system-ui,sans-serif;margin:0;background:#fff;color:#222}
header{padding:8px 12px;border-bottom:1px solid #ddd;display:flex;gap:16px;align-items:center;flex-wrap:wrap}
header h1{font-size:15px;margin:0}
#meta{color:#555;font-size:12px}
canvas{display:block}
#legend span{display:inline-block;margin-right:10px;font-size:12px}
#legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px}
</style></head><body>
<header><h1>${escapeHtml(title)}</h1><label>trial <select id="pid"></select></label>
<span id="view"></span><span id="legend"></span></header>
<div id="meta"></div>
<canvas id="c"></canvas>
<script>
const D=${json};
const COLORS={task:'#8fb3de',idle:'#d9d9d9',hardirq:'#e4572e',softirq:'#4caf50',handoff:'#f2c14e',work:'#b5651d',generator:'#2a9d8f',other:'#999'};
const KIND={'swapper':'#e8e8e8','kworker':'#f4a261','ksoftirqd':'#9b72cf','hog':'#c44536'};
const cv=document.getElementById('c'),g=cv.getContext('2d'),sel=document.getElementById('pid');
const pids=Object.keys(D.procs).map(Number).sort((a,b)=>a-b);
for(const p of pids){const o=document.createElement('option');o.value=p;o.textContent=D.procs[p];sel.appendChild(o);}
document.getElementById('legend').innerHTML=Object.entries({task:'task',idle:'halt',hardirq:'hard IRQ',softirq:'softirq',handoff:'hand-off',work:'deferred work',generator:'generator'}).map(([k,v])=>'<span><i style="background:'+COLORS[k]+'"></i>'+v+'</span>').join('')+'<span>→ hand-off to work</span>';
const m=D.meta;document.getElementById('meta').textContent='window '+m.windowMs+' ms per trial · '+m.trials+' trials · records overwritten before read '+m.recordsOverwritten+' · truncated windows '+m.truncatedWindows.length+' · unmatched flows '+m.unmatchedFlows+' · repaired slices '+m.repairedSlices+' · '+m.generator;
const H=16,PAD=150;let cur,t0,t1,lo,hi;
function colour(s){if(s[5]==='task'){for(const k in KIND)if(String(s[4]).startsWith(k))return KIND[k];return COLORS.task;}return COLORS[s[5]]||COLORS.other;}
function load(pid,from,to){
  const ss=D.slices.filter(s=>s[0]===pid).sort((a,b)=>a[1]-b[1]||a[2]-b[2]||b[3]-a[3]);
  const tids=[...new Set(ss.map(s=>s[1]).concat(D.instants.filter(s=>s[0]===pid).map(s=>s[1])))].sort((a,b)=>a-b);
  const depth=[],rows={};let y=24;
  for(const tid of tids){const st=[];let maxd=0;
    for(const s of ss){if(s[1]!==tid)continue;while(st.length&&st[st.length-1]<=s[2]+1e-9)st.pop();s.d=st.length;maxd=Math.max(maxd,s.d);st.push(s[2]+s[3]);}
    rows[tid]={y,h:(maxd+1)*H+8};y+=rows[tid].h;}
  lo=Infinity;hi=-Infinity;for(const s of ss){lo=Math.min(lo,s[2]);hi=Math.max(hi,s[2]+s[3]);}
  cur={pid,ss,tids,rows,height:y+10};
  t0=from!==undefined?lo+from:lo;t1=to!==undefined?lo+to:Math.min(hi,lo+2000);draw();}
function depthAt(tid,t){let d=0;for(const s of cur.ss)if(s[1]===tid&&s[2]<=t&&t<=s[2]+s[3])d=Math.max(d,s.d);return d;}
function X(t){return PAD+(t-t0)/(t1-t0)*(cv.width/devicePixelRatio-PAD-10);}
function draw(){
  const W=window.innerWidth,Hh=cur.height;cv.width=W*devicePixelRatio;cv.height=Hh*devicePixelRatio;cv.style.width=W+'px';cv.style.height=Hh+'px';
  g.setTransform(devicePixelRatio,0,0,devicePixelRatio,0,0);g.clearRect(0,0,W,Hh);g.font='11px system-ui,sans-serif';
  // axis
  const span=t1-t0,step=Math.pow(10,Math.floor(Math.log10(span/6)));const st=span/step>30?step*5:span/step>12?step*2:step;
  g.fillStyle='#555';g.strokeStyle='#eee';
  for(let t=Math.ceil((t0-lo)/st)*st;t<=t1-lo;t+=st){const x=X(lo+t);g.beginPath();g.moveTo(x,18);g.lineTo(x,Hh);g.stroke();g.fillText((t/1000).toFixed(st<10?3:st<100?2:1)+' ms',x+2,12);}
  for(const tid of cur.tids){const r=cur.rows[tid];g.fillStyle='#f7f7f7';g.fillRect(0,r.y,PAD-6,r.h-4);g.fillStyle='#222';g.fillText(D.threads[cur.pid+':'+tid]||('track '+tid),6,r.y+13);
    g.strokeStyle='#ddd';g.beginPath();g.moveTo(0,r.y+r.h-2);g.lineTo(W,r.y+r.h-2);g.stroke();}
  g.save();g.beginPath();g.rect(PAD,0,W-PAD,Hh);g.clip();
  for(const s of cur.ss){if(s[2]+s[3]<t0||s[2]>t1)continue;const r=cur.rows[s[1]];const x=X(s[2]),w=Math.max(1,X(s[2]+s[3])-x),y=r.y+s.d*H;
    g.fillStyle=colour(s);g.fillRect(x,y,w,H-2);const lx=Math.max(x,PAD),lw=x+w-lx;if(lw>30){g.fillStyle='#111';g.fillText(String(s[4]).slice(0,Math.floor(lw/6)),lx+2,y+11);}}
  for(const s of D.instants){if(s[0]!==cur.pid||s[2]<t0||s[2]>t1)continue;const r=cur.rows[s[1]];if(!r)continue;const x=X(s[2]);g.strokeStyle=String(s[3]).startsWith('measured')?'#000':'#2a9d8f';g.beginPath();g.moveTo(x,r.y);g.lineTo(x,r.y+r.h-6);g.stroke();}
  g.strokeStyle='#333';g.fillStyle='#333';
  for(const f of D.flows){if(f[0]!==cur.pid)continue;if(f[2]>t1||f[4]<t0)continue;const a=cur.rows[f[1]],b=cur.rows[f[3]];if(!a||!b)continue;
    const x1=X(f[2]),y1=a.y+H*(depthAt(f[1],f[2])+0.5),x2=X(f[4]),y2=b.y+H*(depthAt(f[3],f[4])+0.5);g.beginPath();g.moveTo(x1,y1);g.bezierCurveTo(x1+20,y1,x2-20,y2,x2,y2);g.stroke();
    g.beginPath();g.moveTo(x2,y2);g.lineTo(x2-6,y2-3);g.lineTo(x2-6,y2+3);g.fill();}
  g.restore();
  document.getElementById('view').textContent=((t0-lo)/1000).toFixed(3)+' – '+((t1-lo)/1000).toFixed(3)+' ms of '+((hi-lo)/1000).toFixed(1)+' ms';}
cv.addEventListener('wheel',e=>{e.preventDefault();const t=t0+(e.offsetX-PAD)/(cv.width/devicePixelRatio-PAD-10)*(t1-t0);const k=e.deltaY>0?1.25:0.8;t0=t-(t-t0)*k;t1=t+(t1-t)*k;draw();},{passive:false});
let drag;cv.addEventListener('mousedown',e=>drag=[e.clientX,t0,t1]);window.addEventListener('mouseup',()=>drag=undefined);
window.addEventListener('mousemove',e=>{if(!drag)return;const dt=(e.clientX-drag[0])/(cv.width/devicePixelRatio-PAD-10)*(drag[2]-drag[1]);t0=drag[1]-dt;t1=drag[2]-dt;draw();});
sel.addEventListener('change',()=>load(Number(sel.value)));window.addEventListener('resize',draw);
const q=new URLSearchParams(location.hash.slice(1));const p0=q.has('pid')?Number(q.get('pid')):pids[pids.length-1];sel.value=p0;
if(pids.length)load(p0,q.has('from')?Number(q.get('from')):undefined,q.has('to')?Number(q.get('to')):undefined);
</script></body></html>
`;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
