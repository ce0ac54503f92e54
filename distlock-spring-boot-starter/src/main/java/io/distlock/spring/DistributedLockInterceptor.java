package io.distlock.spring;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The advice of {@link DistributedLock}: works out the lock name, acquires through {@link LockTemplate}, hands the
 * fencing token to a {@link FencingToken} parameter, and releases as the template does (after the transaction when
 * one is active).
 *
 * <h2>Plans</h2>
 *
 * <p>The first call of a method on a class reads its annotation once into a plan: the parsed key expression, the wait
 * and lease durations (placeholders resolved), the index of the fencing parameter and the fallback method. A plan that
 * cannot be made (a bad expression, a fencing parameter that is not a {@code long}, a fallback that does not exist)
 * fails that call with {@link IllegalStateException} naming the method.
 *
 * <h2>Keys</h2>
 *
 * <p>The key is evaluated with the method's arguments as variables (by parameter name, and as {@code #p0}/{@code
 * #a0}), the {@link KeyRoot} as root object and the application's beans as {@code @name}; a null value fails the call
 * with {@link IllegalArgumentException}.
 */
public final class DistributedLockInterceptor implements MethodInterceptor {
    private static final SpelExpressionParser PARSER = new SpelExpressionParser();

    private final Supplier<LockTemplate> templates;
    private volatile @Nullable LockTemplate template;
    private final @Nullable Duration defaultWait;
    private final UnaryOperator<String> placeholders;
    private final @Nullable BeanFactory beanFactory;
    private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();
    private final ConcurrentHashMap<Method, ConcurrentHashMap<Class<?>, Plan>> plans = new ConcurrentHashMap<>();

    /**
     * @param templates gives the template that acquires and releases, on the first call (so that advising beans does
     *     not create the lock client early)
     * @param defaultWait the wait of annotations without one; null to wait as long as it takes
     * @param placeholders resolves {@code ${...}} in the annotation's durations
     * @param beanFactory resolves {@code @bean} references in keys, or null
     */
    public DistributedLockInterceptor(
            Supplier<LockTemplate> templates,
            @Nullable Duration defaultWait,
            UnaryOperator<String> placeholders,
            @Nullable BeanFactory beanFactory) {
        this.templates = Objects.requireNonNull(templates, "templates");
        this.defaultWait = defaultWait;
        this.placeholders = Objects.requireNonNull(placeholders, "placeholders");
        this.beanFactory = beanFactory;
    }

    /** The root object of a key expression: {@code #root.target}, {@code #root.methodName}, {@code #root.args}. */
    public static final class KeyRoot {
        private final Object target;
        private final Method method;
        private final @Nullable Object[] args;

        KeyRoot(Object target, Method method, @Nullable Object[] args) {
            this.target = target;
            this.method = method;
            this.args = args;
        }

        public Object getTarget() {
            return target;
        }

        public Method getMethod() {
            return method;
        }

        public @Nullable Object[] getArgs() {
            return args.clone();
        }

        public String getMethodName() {
            return method.getName();
        }

        public Class<?> getTargetClass() {
            return AopUtils.getTargetClass(target);
        }
    }

    @Override
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        if (target == null) {
            return invocation.proceed();
        }
        Class<?> targetClass = AopUtils.getTargetClass(target);
        Plan plan = plans.computeIfAbsent(invocation.getMethod(), m -> new ConcurrentHashMap<>())
                .computeIfAbsent(targetClass, c -> plan(invocation.getMethod(), c));
        @Nullable Object[] args = invocation.getArguments();
        LockRequest request = new LockRequest(plan.name(target, args), plan.kind, plan.waitTime, plan.leaseTime);
        LockTemplate template = template();
        LockTemplate.Hold hold = template.acquire(request);
        if (hold == null) {
            return onTimeout(plan, request, target, args);
        }
        if (plan.tokenIndex >= 0) {
            args[plan.tokenIndex] = hold.token;
        }
        Object result;
        try {
            result = invocation.proceed();
        } catch (Throwable t) {
            template.releaseAfterFailure(hold, t);
            throw t;
        }
        template.release(hold);
        return result;
    }

    private LockTemplate template() {
        LockTemplate t = template;
        if (t == null) {
            t = Objects.requireNonNull(templates.get(), "template");
            template = t;
        }
        return t;
    }

    private @Nullable Object onTimeout(Plan plan, LockRequest request, Object target, @Nullable Object[] args)
            throws Throwable {
        switch (plan.onTimeout) {
            case SKIP:
                return emptyValue(plan.method.getReturnType());
            case FALLBACK:
                Method fallback = Objects.requireNonNull(plan.fallback);
                try {
                    return fallback.getParameterCount() == 0
                            ? fallback.invoke(target)
                            : fallback.invoke(target, (Object[]) args);
                } catch (InvocationTargetException e) {
                    throw Objects.requireNonNull(e.getCause());
                }
            case THROW:
            default:
                throw new LockNotAcquiredException(request.name(), request.waitTime(), null);
        }
    }

    private static @Nullable Object emptyValue(Class<?> type) {
        if (type == Optional.class) {
            return Optional.empty();
        }
        if (type == boolean.class) {
            return false;
        }
        if (type == char.class) {
            return '\0';
        }
        if (type.isPrimitive() && type != void.class) {
            // byte, short, int, long, float, double: zero of the type
            return java.lang.reflect.Array.get(java.lang.reflect.Array.newInstance(type, 1), 0);
        }
        return null;
    }

    private Plan plan(Method method, Class<?> targetClass) {
        Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
        DistributedLock ann = AnnotatedElementUtils.findMergedAnnotation(specific, DistributedLock.class);
        if (ann == null) {
            ann = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class);
        }
        String where = ClassUtils.getQualifiedMethodName(specific, targetClass);
        if (ann == null) {
            throw new IllegalStateException("no @DistributedLock on " + where);
        }
        try {
            Expression key = ann.key().isBlank() ? null : PARSER.parseExpression(ann.key());
            Duration wait = ann.waitTime().isBlank() ? defaultWait : duration(ann.waitTime(), "waitTime");
            Duration lease = ann.leaseTime().isBlank() ? null : duration(ann.leaseTime(), "leaseTime");
            if (lease != null && (lease.isNegative() || lease.isZero())) {
                throw new IllegalArgumentException("leaseTime must be positive: " + ann.leaseTime());
            }
            int tokenIndex = -1;
            for (int i = 0; i < specific.getParameterCount(); i++) {
                if (specific.getParameters()[i].isAnnotationPresent(FencingToken.class)) {
                    Class<?> t = specific.getParameterTypes()[i];
                    if (t != long.class && t != Long.class) {
                        throw new IllegalArgumentException(
                                "the @FencingToken parameter must be a long or Long, not " + t.getName());
                    }
                    if (tokenIndex >= 0) {
                        throw new IllegalArgumentException("more than one @FencingToken parameter");
                    }
                    tokenIndex = i;
                }
            }
            Method fallback = null;
            if (ann.onTimeout() == DistributedLock.OnTimeout.FALLBACK) {
                fallback = fallback(specific, targetClass, ann.fallback());
            } else if (!ann.fallback().isEmpty()) {
                throw new IllegalArgumentException("fallback is set but onTimeout is " + ann.onTimeout());
            }
            String defaultName = targetClass.getName() + "." + specific.getName();
            return new Plan(specific, key, defaultName, ann.kind(), wait, lease, ann.onTimeout(), tokenIndex, fallback);
        } catch (RuntimeException e) {
            throw new IllegalStateException("bad @DistributedLock on " + where + ": " + e.getMessage(), e);
        }
    }

    private Duration duration(String text, String what) {
        String resolved = placeholders.apply(text);
        try {
            return DurationStyle.detectAndParse(resolved.trim());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(what + " is not a duration: '" + resolved + "'", e);
        }
    }

    private static Method fallback(Method method, Class<?> targetClass, String name) {
        if (name.isBlank()) {
            throw new IllegalArgumentException("onTimeout is FALLBACK but no fallback method is named");
        }
        Method found = ReflectionUtils.findMethod(targetClass, name, method.getParameterTypes());
        if (found == null) {
            found = ReflectionUtils.findMethod(targetClass, name, new Class<?>[0]);
        }
        if (found == null) {
            throw new IllegalArgumentException("no fallback method " + name + " in " + targetClass.getName()
                    + " taking the locked method's parameters or none");
        }
        Class<?> want = ClassUtils.resolvePrimitiveIfNecessary(method.getReturnType());
        Class<?> have = ClassUtils.resolvePrimitiveIfNecessary(found.getReturnType());
        if (method.getReturnType() != void.class && !want.isAssignableFrom(have)) {
            throw new IllegalArgumentException(
                    "fallback " + name + " returns " + found.getReturnType().getName() + ", not a "
                            + method.getReturnType().getName());
        }
        ReflectionUtils.makeAccessible(found);
        return found;
    }

    private final class Plan {
        final Method method;
        final @Nullable Expression key;
        final String defaultName;
        final DistributedLock.Kind kind;
        final @Nullable Duration waitTime;
        final @Nullable Duration leaseTime;
        final DistributedLock.OnTimeout onTimeout;
        final int tokenIndex;
        final @Nullable Method fallback;

        Plan(
                Method method,
                @Nullable Expression key,
                String defaultName,
                DistributedLock.Kind kind,
                @Nullable Duration waitTime,
                @Nullable Duration leaseTime,
                DistributedLock.OnTimeout onTimeout,
                int tokenIndex,
                @Nullable Method fallback) {
            this.method = method;
            this.key = key;
            this.defaultName = defaultName;
            this.kind = kind;
            this.waitTime = waitTime;
            this.leaseTime = leaseTime;
            this.onTimeout = onTimeout;
            this.tokenIndex = tokenIndex;
            this.fallback = fallback;
        }

        String name(Object target, @Nullable Object[] args) {
            Expression k = key;
            if (k == null) {
                return defaultName;
            }
            MethodBasedEvaluationContext context =
                    new MethodBasedEvaluationContext(new KeyRoot(target, method, args), method, args, parameterNames);
            if (beanFactory != null) {
                context.setBeanResolver(new BeanFactoryResolver(beanFactory));
            }
            Object value = k.getValue(context);
            if (value == null) {
                throw new IllegalArgumentException("the @DistributedLock key '" + k.getExpressionString() + "' of "
                        + ClassUtils.getQualifiedMethodName(method) + " is null");
            }
            return value.toString();
        }
    }
}
