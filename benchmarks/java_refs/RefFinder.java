// The reference finder of bench_java_agreement: javac's own attribution, read through the Trees API.
//
// Compiles the given files (nothing is written: the task only parses and analyses) and prints one line per
// use of a method or constructor declared in source javac read (the files given, or a provider's on the
// sourcepath): a call, an object creation (a constructor, or the class's implicit one), or a method
// reference. Each line: kind, the site's file and line, the target's file and the line of its name.
//
//   java --add-exports jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED RefFinder.java ARGS
//
// ARGS is a file of lines: OUT.tsv, CLASSPATH, SOURCEPATH, then one source file per line. A target declared
// in an anonymous or a local class is not printed.
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.MemberReferenceTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.tree.NewClassTree;
import com.sun.source.tree.Tree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.TreePath;
import com.sun.source.util.TreePathScanner;
import com.sun.source.util.Trees;
import com.sun.tools.javac.tree.JCTree;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.lang.model.element.Element;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.NestingKind;
import javax.lang.model.element.TypeElement;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

public class RefFinder {
    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        Path out = Path.of(lines.get(0));
        String classpath = lines.get(1);
        String sourcepath = lines.get(2);
        List<String> files = lines.subList(3, lines.size());
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StandardJavaFileManager fm = javac.getStandardFileManager(null, null, StandardCharsets.UTF_8);
        List<String> options = new ArrayList<>(List.of("-proc:none", "-implicit:none", "-nowarn",
                "-XDshould-stop.ifError=FLOW", "-encoding", "UTF-8", "-Xmaxerrs", "100000"));
        if (!classpath.isEmpty()) { options.add("-classpath"); options.add(classpath); }
        if (!sourcepath.isEmpty()) { options.add("-sourcepath"); options.add(sourcepath); }
        Iterable<? extends JavaFileObject> units = fm.getJavaFileObjectsFromStrings(files);
        JavacTask task = (JavacTask) javac.getTask(null, fm, d -> { }, options, null, units);
        Iterable<? extends CompilationUnitTree> parsed = task.parse();
        task.analyze();
        Trees trees = Trees.instance(task);
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out, StandardCharsets.UTF_8))) {
            for (CompilationUnitTree cu : parsed) {
                new TreePathScanner<Void, Void>() {
                    @Override public Void visitMethodInvocation(MethodInvocationTree t, Void v) {
                        TreePath here = new TreePath(getCurrentPath(), t.getMethodSelect());
                        emitAt("call", t.getMethodSelect(), here);
                        return super.visitMethodInvocation(t, v);
                    }

                    void emitAt(String kind, Tree site, TreePath path) {
                        Element e = trees.getElement(path);
                        if (e == null || (e.getKind() != ElementKind.METHOD && e.getKind() != ElementKind.CONSTRUCTOR)) {
                            return;
                        }
                        for (Element up = e.getEnclosingElement(); up != null; up = up.getEnclosingElement()) {
                            if (up instanceof TypeElement type && (type.getNestingKind() == NestingKind.ANONYMOUS
                                    || type.getNestingKind() == NestingKind.LOCAL)) {
                                return;
                            }
                        }
                        TreePath decl = trees.getPath(e);
                        if (decl == null) {
                            return;
                        }
                        CompilationUnitTree where = decl.getCompilationUnit();
                        int pos = ((JCTree) decl.getLeaf()).pos;
                        if (pos < 0) {
                            return;
                        }
                        long declLine = where.getLineMap().getLineNumber(pos);
                        long siteLine = cu.getLineMap().getLineNumber(((JCTree) site).pos);
                        w.println(kind + "\t" + Path.of(cu.getSourceFile().toUri()) + "\t" + siteLine + "\t"
                                + Path.of(where.getSourceFile().toUri()) + "\t" + declLine);
                    }

                    @Override public Void visitNewClass(NewClassTree t, Void v) {
                        emitAt("new", t.getIdentifier(), getCurrentPath());
                        return super.visitNewClass(t, v);
                    }

                    @Override public Void visitMemberReference(MemberReferenceTree t, Void v) {
                        emitAt("callback", t, getCurrentPath());
                        return super.visitMemberReference(t, v);
                    }
                }.scan(cu, null);
            }
        }
    }
}
