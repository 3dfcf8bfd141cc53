// launch_bench.cpp: times one emulated launch of flash_attn_sinks outside the JVM (the checked build against the
// plain one: pass either library). Build and run:
//   native/emu/build.sh /tmp/emu && g++ -O2 -o /tmp/launch_bench native/emu/launch_bench.cpp -ldl
//   /tmp/launch_bench /tmp/emu/libattnproof_cuda_emu.so 20; /tmp/launch_bench /tmp/emu/libattnproof_cuda_emu_plain.so 20
// B 1, Hq 4, Hkv 2, t_q = t_k = 64, D 64: grid (8, 4, 1) of 128 threads (BLOCK_Q 8 x BLOCK_K 16).
#include <dlfcn.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
#include <cstdlib>
typedef int (*launch_t)(const char*, const long long*, int, const int*, const long long*, const long long*, char*, long long);
int main(int argc, char** argv) {
  void* h = dlopen(argv[1], RTLD_NOW); if (!h) { printf("%s\n", dlerror()); return 1; }
  auto L = (launch_t)dlsym(h, "attnproof_emu_launch");
  int B=1,Hq=4,Hkv=2,tq=64,tk=64,D=64,W=0; float scale=0.125f;
  std::vector<float> q(B*Hq*tq*D,0.01f), k(B*Hkv*tk*D,0.02f), v(B*Hkv*tk*D,0.03f), s(Hq,0.f), out(B*Hq*tq*D);
  int status=0;
  int kinds[15]={2,2,2,2,4,2,3,0,0,0,0,0,0,0,1};
  long long vals[15]={(long long)q.data(),(long long)k.data(),(long long)v.data(),(long long)s.data(),0,(long long)out.data(),(long long)&status,B,Hq,Hkv,tq,tk,D,W,0};
  int sb; memcpy(&sb,&scale,4); vals[14]=sb;
  long long lens[15]={(long long)q.size(),(long long)k.size(),(long long)v.size(),(long long)s.size(),0,(long long)out.size(),1,0,0,0,0,0,0,0,0};
  const int bq = 8;
  long long dims[6]={(tq+bq-1)/bq, Hq, B, 128,1,1};
  char err[512];
  auto t0=std::chrono::steady_clock::now();
  int n = argc > 2 ? atoi(argv[2]) : 10;
  for(int i=0;i<n;i++){ int r=L("flash_attn_sinks",dims,15,kinds,vals,lens,err,512); if(r){printf("rc %d %s\n",r,err);return 1;} }
  auto t1=std::chrono::steady_clock::now();
  printf("%.2f ms/launch, status %d out[0] %g\n", std::chrono::duration<double,std::milli>(t1-t0).count()/n, status, out[0]);
}
